import { and, eq, type SQL, sql } from "drizzle-orm";
import { invitations, type MemberStatus, memberGroups, type Role, users } from "../../db/schema";
import { batchGuard, isBatchGuardFailure, jsonArrays } from "../../platform/batch";
import type { Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { emailClaims } from "../../platform/service/directory";
import { groupInserts } from "./directory-groups";
import { type MemberChanges, memberRemoved, memberUpdated, sameGroups } from "./events";
import type { MemberRow } from "./present";
import { settleMemberChange } from "./principal-refresh";
import { anotherActiveAdmin, findMember, seatsAllow } from "./queries";
import { lastAdminError, seatError, takesAdminAway, uniqueConflict } from "./rules";
import { pushRevocations, revokeTokensOf } from "./token-revocation";

/** The member changed between the read and the write: read it again and re-apply the request. */
export class MemberChangedMeanwhile extends Error {
  constructor() {
    super("The member changed while the request was applied.");
  }
}

/** How many times a change is read and applied in all, while other requests keep changing the member. */
export const ATTEMPTS = 4;

/**
 * Runs `attempt` (read the member, work out the change, `writeMemberChange` it) again while it lost
 * a race (`MemberChangedMeanwhile`), at most ATTEMPTS times in all; then answers `exhausted()`. Every
 * door that changes members reads, computes and writes through this (the members API's PATCH, SCIM's
 * User and Group changes, LTI launches, SSO sign-ins, invitations' acceptance; a bulk upload counts
 * its rows' lost races itself, bulk/runner.ts), so that each `member.updated` event's `from` is what
 * the member really was.
 */
export async function reapplyWhileMemberChanges<T>(
  attempt: () => Promise<T>,
  exhausted: () => Promise<T> | T,
): Promise<T> {
  for (let n = 1; n <= ATTEMPTS; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof MemberChangedMeanwhile)) throw error;
    }
  }
  return exhausted();
}

/** What a member change compares: the member's fields as read, and its groups. */
export type MemberFacts = Pick<
  MemberRow,
  "id" | "email" | "name" | "role" | "status" | "externalId" | "groups"
>;

/** The fields of a member a write can depend on. */
export type ComparedField = Exclude<keyof MemberFacts, "id">;

/** Every field: what a write of any of the member's fields compares (a PATCH, a bulk row). */
export const EVERY_FIELD: readonly ComparedField[] = [
  "email",
  "name",
  "role",
  "status",
  "externalId",
  "groups",
];

/** Each field's comparison of the member's row `u` with its read `m.value` (membersUnchangedSince). */
const FIELD_UNCHANGED: Record<ComparedField, SQL> = {
  email: sql`u.email = m.value->>'email'`,
  name: sql`u.name = m.value->>'name'`,
  role: sql`u.role = m.value->>'role'`,
  status: sql`u.status = m.value->>'status'`,
  externalId: sql`u.external_id IS m.value->>'external_id'`,
  groups: sql`(SELECT json_group_array(group_name) FROM (SELECT group_name FROM member_groups AS g WHERE g.user_id = u.id ORDER BY 1))
    = (SELECT json_group_array(value) FROM (SELECT value FROM json_each(m.value->'groups') ORDER BY 1))`,
};

/** A member's own fields as the members' JSON-array statements bind them (the guard's, bulk/sql.ts's). */
export function memberFieldsJson(m: Omit<MemberFacts, "groups">) {
  return {
    id: m.id,
    email: m.email,
    name: m.name,
    role: m.role,
    status: m.status,
    external_id: m.externalId,
  };
}

/**
 * Statements that fail the batch unless each of `members` is still a member of the institution with
 * each of `fields` as it was read (its groups in any order), one per JSON array of members: the guard
 * of every door that writes members as it read them — one member here (every field), a group's
 * members (directory-groups.ts: their groups), a bulk upload's chunk (bulk/apply.ts: every field), a
 * sync's suspensions (bulk/runner.ts). `fields` are those the write depends on: another change of a
 * field it neither writes nor reports does not overtake it.
 */
export function membersUnchangedSince(
  db: Database,
  institutionId: string,
  members: readonly MemberFacts[],
  fields: readonly ComparedField[] = EVERY_FIELD,
): Writable[] {
  const facts = members.map((m) => ({ ...memberFieldsJson(m), groups: m.groups }));
  const unchanged = sql.join(
    [
      sql`u.id = m.value->>'id' AND u.institution_id = ${institutionId}`,
      ...fields.map((f) => FIELD_UNCHANGED[f]),
    ],
    sql` AND `,
  );
  return jsonArrays(facts).map((json) =>
    batchGuard(
      db,
      sql`NOT EXISTS (SELECT 1 FROM json_each(${json}) AS m WHERE NOT EXISTS (SELECT 1 FROM users AS u WHERE ${unchanged}))`,
    ),
  );
}

/** Whether two reads of a member agree on `fields` (every field a change compares, by default). */
export function sameMember(
  a: MemberFacts,
  b: MemberFacts,
  fields: readonly ComparedField[] = EVERY_FIELD,
): boolean {
  return fields.every((f) => (f === "groups" ? sameGroups(a.groups, b.groups) : a[f] === b[f]));
}

/**
 * Writes one member's `changes` (as compared with `current`, the member as read), whichever door
 * they came through: the members API's PATCH (service.ts), a directory's SCIM PUT or PATCH
 * (directory-change.ts), an LTI launch (lti/launch/provision-user.ts), an SSO sign-in
 * (provision.ts) or an invitation's acceptance (invitations.ts). One batch, made only while
 * the member is still exactly `current` (else `MemberChangedMeanwhile`: the caller reads again and
 * re-applies, `reapplyWhileMemberChanges`): the caller's `guards`, the rules' guards (the last active
 * admin is not demoted or suspended, `last_admin`; a reactivation needs a free seat), the member's
 * row and groups, a suspension's token revocations, the caller's `extra` statements and
 * `member.updated`. Then the member's tokens learn of it (principal-refresh.ts) and the member is
 * read back. `stale`, after a refused batch, tells whether one of the caller's own guards broke
 * (then `MemberChangedMeanwhile` too).
 */
export async function writeMemberChange(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    current: MemberRow;
    changes: MemberChanges;
    /**
     * Columns of the member's row written with the change but no part of it: no event reports them
     * and the guard does not compare them (a sign-in's `lastActiveAt`, an accepted invitation's
     * password).
     */
    alsoSet?: Partial<Pick<typeof users.$inferInsert, "lastActiveAt" | "passwordHash">>;
    guards?: Writable[];
    extra?: Writable[];
    stale?: () => Promise<boolean>;
  },
): Promise<MemberRow> {
  const { db } = ctx;
  const { institutionId, current, changes } = input;
  const extra = input.extra ?? [];
  const alsoSet = input.alsoSet ?? {};
  const changed = Object.keys(changes).length > 0;
  const setsColumns = changed || Object.keys(alsoSet).length > 0;
  if (!setsColumns && extra.length === 0) return current;

  const now = nowIso(ctx.now());
  const role = (changes.role?.to as Role | undefined) ?? current.role;
  const status = (changes.status?.to as MemberStatus | undefined) ?? current.status;
  const statements: Writable[] = [
    ...membersUnchangedSince(db, institutionId, [current]),
    ...(input.guards ?? []),
  ];
  const adminGoes = takesAdminAway(current, role, status);
  if (adminGoes) statements.push(batchGuard(db, anotherActiveAdmin(institutionId, current.id)));
  const reactivates = current.status === "suspended" && status === "active";
  if (reactivates) statements.push(batchGuard(db, seatsAllow(institutionId, 1)));
  if (setsColumns) {
    statements.push(
      db
        .update(users)
        .set({
          ...(changes.email ? { email: changes.email.to as string } : {}),
          ...(changes.name ? { name: changes.name.to as string } : {}),
          ...(changes.role ? { role } : {}),
          ...(changes.status ? { status } : {}),
          ...(changes.external_id ? { externalId: changes.external_id.to as string | null } : {}),
          ...(changed ? { updatedAt: now } : {}),
          ...alsoSet,
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
      const again = await findMember(db, institutionId, current.id);
      // Gone (removed meanwhile) is a change too: the caller's read again answers it in its own terms.
      if (!again || !sameMember(again, current) || (await input.stale?.()))
        throw new MemberChangedMeanwhile();
      throw reactivates && !adminGoes ? seatError() : lastAdminError(reactivates);
    }
    throw uniqueConflict(error) ?? error;
  }
  // Only columns beside a change (a sign-in's or launch's lastActiveAt; the extra statements): the
  // member is as read with them, so no read back on every sign-in.
  if (!changed) {
    return alsoSet.lastActiveAt === undefined ? current : { ...current, lastActiveAt: alsoSet.lastActiveAt };
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
