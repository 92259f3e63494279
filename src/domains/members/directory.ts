import { and, eq, isNull, ne, sql } from "drizzle-orm";
import { invitations, type MemberStatus, memberGroups, users } from "../../db/schema";
import { batchGuard, isBatchGuardFailure } from "../../platform/batch";
import { DECOY_PASSWORD_HASH } from "../../platform/crypto/passwords";
import type { Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { newId, nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { emailClaims } from "../../platform/service/directory";
import { groupInserts } from "./directory-groups";
import {
  type MemberChanges,
  memberCreated,
  memberRemoved,
  memberUpdated,
  normaliseGroups,
  sameGroups,
} from "./events";
import type { MemberRow } from "./present";
import { refreshPrincipals } from "./principal-refresh";
import { anotherActiveAdmin, findMember, memberColumns, seatsAllow } from "./queries";
import { lastAdminError, seatError, takesAdminAway, uniqueConflict } from "./rules";
import { pushRevocations, revokeTokensOf } from "./token-revocation";

/**
 * Members as an institution's own directory keeps them (SCIM provisioning from Okta or Entra): the
 * same rows, guards and `member.*` events as the members API (service.ts), without a caller's role —
 * the directory's bearer token speaks for the institution, and never grants a role (its members are
 * learners unless an administrator changes them). Each write is one `commit`; a change is made only
 * if the member is still as it was read (`MemberChangedMeanwhile` otherwise, for the caller to read
 * again and re-apply its request), so two concurrent changes never lose one another's fields.
 */

/** The member changed between the read and the write: read it again and re-apply the request. */
export class MemberChangedMeanwhile extends Error {
  constructor() {
    super("The member changed while the request was applied.");
  }
}

export interface DirectoryMember {
  email: string;
  name: string;
  externalId: string | null;
  /** `false`: created suspended (takes no seat). */
  active: boolean;
  groups: string[];
}

/**
 * Creates an active (or suspended) member: the directory vouches for the person, who signs in
 * through the institution's identity provider, so there is no invitation. `extra(memberId)` adds
 * statements of the caller's to the same batch. Seat limit and unique e-mail / external id as in
 * the members API.
 */
export async function createDirectoryMember(
  ctx: ServiceContext,
  input: { institutionId: string; member: DirectoryMember; extra?: (memberId: string) => Writable[] },
): Promise<MemberRow> {
  const { db } = ctx;
  const { institutionId } = input;
  const id = newId("usr");
  const now = nowIso(ctx.now());
  const status: MemberStatus = input.member.active ? "active" : "suspended";
  const member = {
    id,
    email: input.member.email.trim().toLowerCase(),
    name: input.member.name,
    role: "learner" as const,
    status,
    externalId: input.member.externalId,
    groups: normaliseGroups(input.member.groups),
  };
  const statements: Writable[] = [];
  if (status === "active") statements.push(batchGuard(db, seatsAllow(institutionId, 1)));
  statements.push(
    db.insert(users).values({
      id,
      email: member.email,
      name: member.name,
      role: member.role,
      institutionId,
      passwordHash: DECOY_PASSWORD_HASH,
      status,
      externalId: member.externalId,
      createdAt: now,
      updatedAt: now,
    }),
    ...groupInserts(db, institutionId, member.groups, [id]),
    ...(input.extra?.(id) ?? []),
  );
  try {
    await commit(ctx, {
      statements,
      events: [memberCreated(institutionId, member, now)],
      claims: emailClaims(institutionId, [member.email]),
    });
  } catch (error) {
    if (isBatchGuardFailure(error)) throw seatError();
    throw uniqueConflict(error) ?? error;
  }
  const row = await findMember(db, institutionId, id);
  if (!row) throw new Error("member vanished after insert");
  return row;
}

/**
 * Provisions again a person the institution's directory removed earlier (`userId`: a user of no
 * institution, never platform staff): the same user — its learning history — joins the institution
 * again as a new member would, a learner, with `member.created`. The caller knows the institution
 * removed this user (SCIM keeps that); the batch holds only while the user still belongs to none.
 */
export async function rejoinDirectoryMember(
  ctx: ServiceContext,
  input: { institutionId: string; userId: string; member: DirectoryMember; extra?: Writable[] },
): Promise<MemberRow> {
  const { db } = ctx;
  const { institutionId, userId } = input;
  const now = nowIso(ctx.now());
  const status: MemberStatus = input.member.active ? "active" : "suspended";
  const member = {
    id: userId,
    email: input.member.email.trim().toLowerCase(),
    name: input.member.name,
    role: "learner" as const,
    status,
    externalId: input.member.externalId,
    groups: normaliseGroups(input.member.groups),
  };
  const unattached = and(eq(users.id, userId), isNull(users.institutionId), ne(users.role, "platform_admin"));
  const statements: Writable[] = [batchGuard(db, sql`EXISTS (SELECT 1 FROM ${users} WHERE ${unattached})`)];
  if (status === "active") statements.push(batchGuard(db, seatsAllow(institutionId, 1)));
  statements.push(
    db
      .update(users)
      .set({
        institutionId,
        name: member.name,
        role: member.role,
        status,
        externalId: member.externalId,
        updatedAt: now,
      })
      .where(unattached),
    ...groupInserts(db, institutionId, member.groups, [userId]),
    ...(input.extra ?? []),
  );
  try {
    await commit(ctx, { statements, events: [memberCreated(institutionId, member, now)] });
  } catch (error) {
    if (isBatchGuardFailure(error)) {
      const still = await db.select({ id: users.id }).from(users).where(unattached).get();
      if (!still) throw new ApiError("email_taken", "This e-mail address already belongs to an account.");
      throw seatError();
    }
    throw uniqueConflict(error) ?? error;
  }
  const row = await findMember(db, institutionId, userId);
  if (!row) throw new Error("member vanished after rejoining");
  return row;
}

export interface DirectoryChange {
  email?: string;
  name?: string;
  externalId?: string | null;
  /** `active` and `invited` stay as they are unless `suspended` is asked; `active` reactivates a suspended member. */
  status?: "active" | "suspended";
  groups?: string[];
}

function directoryChanges(current: MemberRow, next: DirectoryChange): MemberChanges {
  const changes: MemberChanges = {};
  const email = next.email?.trim().toLowerCase();
  if (email !== undefined && email !== current.email) changes.email = { from: current.email, to: email };
  if (next.name !== undefined && next.name !== current.name)
    changes.name = { from: current.name, to: next.name };
  if (next.externalId !== undefined && next.externalId !== current.externalId)
    changes.external_id = { from: current.externalId, to: next.externalId };
  const status =
    next.status === "suspended"
      ? "suspended"
      : next.status === "active" && current.status === "suspended"
        ? "active"
        : current.status;
  if (status !== current.status) changes.status = { from: current.status, to: status };
  if (next.groups !== undefined) {
    const groups = normaliseGroups(next.groups);
    if (!sameGroups(groups, current.groups)) changes.groups = { from: current.groups, to: groups };
  }
  return changes;
}

/** Holds while the member is exactly as it was read (every field a directory change compares). */
function unchangedSince(db: Database, institutionId: string, current: MemberRow) {
  return batchGuard(
    db,
    sql`EXISTS (SELECT 1 FROM ${users} WHERE ${and(
      eq(users.id, current.id),
      eq(users.institutionId, institutionId),
      eq(users.email, current.email),
      eq(users.name, current.name),
      eq(users.status, current.status),
      eq(users.role, current.role),
    )} AND ${users.externalId} IS ${current.externalId} AND ${memberColumns.groupsJson} = ${JSON.stringify(current.groups)})`,
  );
}

/**
 * Changes a member as the directory says, if it is still `current` (else `MemberChangedMeanwhile`).
 * A suspension revokes every token of the member in the same batch and tells their gates, so the
 * next request with one is 401; suspending the last active admin is refused (`last_admin`), and a
 * reactivation needs a free seat. `extra` rides in the same batch (the caller's own attributes).
 */
export async function changeDirectoryMember(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    current: MemberRow;
    next: DirectoryChange;
    extra?: Writable[];
    /** The caller's own check that what it read still holds; `stale()` tells, after a failure, whether it broke. */
    guard?: { statement: Writable; stale: () => Promise<boolean> };
  },
): Promise<MemberRow> {
  const { db } = ctx;
  const { institutionId, current } = input;
  const changes = directoryChanges(current, input.next);
  const extra = input.extra ?? [];
  if (Object.keys(changes).length === 0 && extra.length === 0) return current;
  const now = nowIso(ctx.now());
  const status = (changes.status?.to as MemberStatus | undefined) ?? current.status;
  const statements: Writable[] = [unchangedSince(db, institutionId, current)];
  if (input.guard) statements.push(input.guard.statement);
  const adminGoes = takesAdminAway(current, current.role, status);
  if (adminGoes) statements.push(batchGuard(db, anotherActiveAdmin(institutionId, current.id)));
  const reactivates = current.status === "suspended" && status === "active";
  if (reactivates) statements.push(batchGuard(db, seatsAllow(institutionId, 1)));
  if (Object.keys(changes).length > 0) {
    statements.push(
      db
        .update(users)
        .set({
          ...(changes.email ? { email: changes.email.to as string } : {}),
          ...(changes.name ? { name: changes.name.to as string } : {}),
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
  const suspends = status === "suspended" && current.status !== "suspended";
  if (suspends) statements.push(revokeTokensOf(db, [current.id], now));
  statements.push(...extra);
  const events =
    Object.keys(changes).length > 0 ? [memberUpdated(institutionId, current.id, changes, now)] : [];
  try {
    await commit(ctx, {
      statements,
      events,
      claims: changes.email ? emailClaims(institutionId, [changes.email.to as string]) : [],
    });
  } catch (error) {
    if (isBatchGuardFailure(error)) {
      const again = await findMember(db, institutionId, current.id);
      if (!again) throw new ApiError("not_found", `No member ${current.id}.`);
      if (!sameMember(again, current) || (await input.guard?.stale())) throw new MemberChangedMeanwhile();
      throw reactivates && !adminGoes ? seatError() : lastAdminError(reactivates);
    }
    throw uniqueConflict(error) ?? error;
  }
  if (suspends) await pushRevocations(ctx, { userIds: [current.id], at: now });
  else if (changes.email) await refreshPrincipals(ctx, { userId: current.id });
  const row = await findMember(db, institutionId, current.id);
  if (!row) throw new ApiError("not_found", `No member ${current.id}.`);
  return row;
}

function sameMember(a: MemberRow, b: MemberRow): boolean {
  return (
    a.email === b.email &&
    a.name === b.name &&
    a.status === b.status &&
    a.role === b.role &&
    a.externalId === b.externalId &&
    sameGroups(a.groups, b.groups)
  );
}

/**
 * Removes a member from the institution as the members API's DELETE does: the user keeps its
 * learning history but leaves the institution, its groups and invitation go, and every token it
 * holds is revoked in the same batch. The last active admin is not removed (`last_admin`).
 */
export async function removeDirectoryMember(
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
