import { and, eq } from "drizzle-orm";
import { invitations, type MemberStatus, memberGroups, type Role, users } from "../../db/schema";
import { batchGuard, isBatchGuardFailure } from "../../platform/batch";
import { ApiError } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { emailClaims } from "../../platform/service/directory";
import { groupInserts } from "./directory-groups";
import { type MemberChanges, memberRemoved, memberUpdated } from "./events";
import type { MemberRow } from "./present";
import { settleMemberChange } from "./principal-refresh";
import { anotherActiveAdmin, findMember, seatsAllow } from "./queries";
import { lastAdminError, seatError, takesAdminAway, uniqueConflict } from "./rules";
import { pushRevocations, revokeTokensOf } from "./token-revocation";

/**
 * Writes one member's `changes` (as compared with `current`, the member as read), whichever door
 * they came through: the members API's PATCH (service.ts) or a directory's SCIM PUT or PATCH
 * (directory-change.ts). One batch: the caller's `guards`, the rules' guards (the last active admin
 * is not demoted or suspended, `last_admin`; a reactivation needs a free seat), the member's row and
 * groups, a suspension's token revocations, the caller's `extra` statements and `member.updated`.
 * Then the member's tokens learn of it (principal-refresh.ts) and the member is read back.
 * `explainRefusal`, after a refused guard, names the caller's own error if one of its guards broke.
 */
export async function writeMemberChange(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    current: MemberRow;
    changes: MemberChanges;
    guards?: Writable[];
    extra?: Writable[];
    explainRefusal?: () => Promise<Error | null>;
  },
): Promise<MemberRow> {
  const { db } = ctx;
  const { institutionId, current, changes } = input;
  const extra = input.extra ?? [];
  const changed = Object.keys(changes).length > 0;
  if (!changed && extra.length === 0) return current;

  const now = nowIso(ctx.now());
  const role = (changes.role?.to as Role | undefined) ?? current.role;
  const status = (changes.status?.to as MemberStatus | undefined) ?? current.status;
  const statements: Writable[] = [...(input.guards ?? [])];
  const adminGoes = takesAdminAway(current, role, status);
  if (adminGoes) statements.push(batchGuard(db, anotherActiveAdmin(institutionId, current.id)));
  const reactivates = current.status === "suspended" && status === "active";
  if (reactivates) statements.push(batchGuard(db, seatsAllow(institutionId, 1)));
  if (changed) {
    statements.push(
      db
        .update(users)
        .set({
          ...(changes.email ? { email: changes.email.to as string } : {}),
          ...(changes.name ? { name: changes.name.to as string } : {}),
          ...(changes.role ? { role } : {}),
          ...(changes.status ? { status } : {}),
          ...(changes.external_id ? { externalId: changes.external_id.to as string | null } : {}),
          updatedAt: now,
        })
        .where(and(eq(users.id, current.id), eq(users.institutionId, institutionId))),
    );
  }
  if (changes.groups) {
    statements.push(db.delete(memberGroups).where(eq(memberGroups.userId, current.id)));
    statements.push(...groupInserts(db, institutionId, changes.groups.to as string[], [current.id]));
  }
  if (status === "suspended" && current.status !== "suspended")
    statements.push(revokeTokensOf(db, [current.id], now));
  statements.push(...extra);
  try {
    await commit(ctx, {
      statements,
      events: changed ? [memberUpdated(institutionId, current.id, changes, now)] : [],
      claims: changes.email ? emailClaims(institutionId, [changes.email.to as string]) : [],
    });
  } catch (error) {
    if (isBatchGuardFailure(error)) {
      const own = await input.explainRefusal?.();
      throw own ?? (reactivates && !adminGoes ? seatError() : lastAdminError(reactivates));
    }
    throw uniqueConflict(error) ?? error;
  }
  await settleMemberChange(ctx, { userId: current.id, changes, at: now });
  const row = await findMember(db, institutionId, current.id);
  if (!row) throw new ApiError("not_found", `No member ${current.id}.`);
  return row;
}

/**
 * Removes a member from the institution, whichever door asked (the members API's DELETE, a SCIM
 * DELETE): the user keeps its learning history (the institution's reports still count it) but
 * leaves the institution and cannot sign in; its groups and invitation go, and every token it holds
 * is revoked in the same batch and told so, so its next request is 401. The last active admin is not
 * removed (`last_admin`). `extra` rides in the same batch; of two removals at once, only the one
 * that moved the member writes `member.removed`.
 */
export async function writeMemberRemoval(
  ctx: ServiceContext,
  input: { institutionId: string; current: MemberRow; extra?: Writable[] },
): Promise<void> {
  const { db } = ctx;
  const { institutionId, current } = input;
  const now = nowIso(ctx.now());
  const statements: Writable[] = [];
  if (takesAdminAway(current, "learner", "suspended"))
    statements.push(batchGuard(db, anotherActiveAdmin(institutionId, current.id)));
  statements.push(
    db.delete(memberGroups).where(eq(memberGroups.userId, current.id)),
    db.delete(invitations).where(eq(invitations.userId, current.id)),
    revokeTokensOf(db, [current.id], now),
    ...(input.extra ?? []),
    // Last: `member.removed` rides on its having changed the row.
    db
      .update(users)
      .set({ institutionId: null, status: "suspended", externalId: null, updatedAt: now })
      .where(and(eq(users.id, current.id), eq(users.institutionId, institutionId))),
  );
  try {
    await commit(ctx, {
      statements,
      events: [memberRemoved(institutionId, current.id, now)],
      eventsIfLastChanged: true,
    });
  } catch (error) {
    if (isBatchGuardFailure(error)) throw lastAdminError();
    throw error;
  }
  await pushRevocations(ctx, { userIds: [current.id], at: now });
}
