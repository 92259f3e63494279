import { and, eq } from "drizzle-orm";
import { invitations, memberGroups, outboxEvents, type Role, users } from "../../db/schema";
import type { Env } from "../../env";
import type { Principal } from "../../platform/auth/principal";
import { batchGuard, isBatchGuardFailure, type Statement } from "../../platform/batch";
import { DECOY_PASSWORD_HASH } from "../../platform/crypto/passwords";
import { type Database, database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { type OutboxRow, publishEvents } from "../../platform/events";
import type { PageRequest } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { institutionInScope, type MemberRole, mayGrant, roleCeilingError } from "../institutions/access";
import type { MemberRow } from "../institutions/present";
import {
  type MemberChanges,
  memberCreated,
  memberRemoved,
  memberUpdated,
  normaliseGroups,
  sameGroups,
} from "./events";
import { invitationUrl, mintInvitation, upsertInvitation } from "./invitations";
import { refreshPrincipals, revokeGates } from "./principal-refresh";
import { anotherActiveAdmin, findMember, listMemberRows, type MemberFilters, seatsAllow } from "./queries";
import type { MemberSort } from "./schemas";
import { revokeTokensOf, tokensRevokedAt } from "./token-revocation";

export async function listMembers(args: {
  env: Env;
  principal: Principal;
  institutionId: string;
  filters: MemberFilters;
  sort: MemberSort;
  page: PageRequest;
}) {
  const institution = await institutionInScope(args.env, args.principal, args.institutionId);
  return listMemberRows(database(args.env.DB), institution.id, args.filters, args.sort, args.page);
}

export async function getMember(env: Env, principal: Principal, institutionId: string, memberId: string) {
  const institution = await institutionInScope(env, principal, institutionId);
  const member = await findMember(database(env.DB), institution.id, memberId);
  if (!member) throw new ApiError("not_found", `No member ${memberId}.`);
  return member;
}

export interface NewMember {
  email: string;
  name: string;
  role: MemberRole;
  externalId: string | null;
  groups: string[];
}

/** Statements that insert an invited member with its groups, invitation and `member.created` event. */
export function insertMemberStatements(
  db: Database,
  env: Env,
  institutionId: string,
  member: NewMember & { id: string },
  invitation: Awaited<ReturnType<typeof mintInvitation>>,
  now: string,
): { statements: Statement[]; event: OutboxRow } {
  const event = memberCreated(institutionId, { ...member, status: "invited" }, now);
  const statements: Statement[] = [
    db.insert(users).values({
      id: member.id,
      email: member.email,
      name: member.name,
      role: member.role,
      institutionId,
      passwordHash: DECOY_PASSWORD_HASH,
      status: "invited",
      externalId: member.externalId,
      createdAt: now,
      updatedAt: now,
    }),
    upsertInvitation(env, { userId: member.id, institutionId, invitation, now }),
    db.insert(outboxEvents).values(event),
  ];
  if (member.groups.length > 0) {
    statements.push(
      db
        .insert(memberGroups)
        .values(member.groups.map((groupName) => ({ institutionId, userId: member.id, groupName }))),
    );
  }
  return { statements, event };
}

/** Why an insert or update of a member broke a unique constraint, as the problem to answer. */
export function uniqueConflict(error: unknown): ApiError | null {
  const text = String(error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : error);
  if (/UNIQUE constraint failed: users\.email/.test(text))
    return new ApiError("email_taken", "This e-mail address already belongs to an account.");
  if (/UNIQUE constraint failed: users\.institution_id, users\.external_id/.test(text))
    return new ApiError("external_id_taken", "Another member of the institution has this external_id.");
  return null;
}

function seatError(): ApiError {
  return new ApiError(
    "seat_limit_reached",
    "Every seat of the institution is taken (invited and active members count); suspend or remove a member, or ask for more seats.",
  );
}

/** Creates an invited member; the answer carries its single-use invitation URL. */
export async function createMember(args: {
  env: Env;
  principal: Principal;
  institutionId: string;
  input: NewMember;
  origin: string;
}) {
  const { env, principal, input } = args;
  const institution = await institutionInScope(env, principal, args.institutionId);
  if (!mayGrant(principal.user.role, input.role)) throw roleCeilingError(principal.user.role, input.role);
  const db = database(env.DB);
  const member = {
    ...input,
    id: newId("usr"),
    email: input.email.trim().toLowerCase(),
    groups: normaliseGroups(input.groups),
  };
  const now = nowIso();
  const invitation = await mintInvitation();
  const { statements, event } = insertMemberStatements(db, env, institution.id, member, invitation, now);
  try {
    await db.batch([batchGuard(db, seatsAllow(institution.id, 1)), ...statements] as [
      Statement,
      ...Statement[],
    ]);
  } catch (error) {
    if (isBatchGuardFailure(error)) throw seatError();
    throw uniqueConflict(error) ?? error;
  }
  await publishEvents(env, [event.id]);
  const row = await findMember(db, institution.id, member.id);
  if (!row) throw new Error("member vanished after insert");
  return {
    member: row,
    invitationUrl: invitationUrl(args.origin, invitation.token),
    invitationExpiresAt: invitation.expiresAt,
  };
}

export interface MemberPatch {
  name?: string;
  role?: MemberRole;
  status?: "active" | "suspended";
  external_id?: string | null;
  groups?: string[];
}

function changesOf(current: MemberRow, patch: MemberPatch): MemberChanges {
  const changes: MemberChanges = {};
  if (patch.name !== undefined && patch.name !== current.name)
    changes.name = { from: current.name, to: patch.name };
  if (patch.role !== undefined && patch.role !== current.role)
    changes.role = { from: current.role, to: patch.role };
  if (patch.status !== undefined && patch.status !== current.status)
    changes.status = { from: current.status, to: patch.status };
  if (patch.external_id !== undefined && patch.external_id !== current.externalId)
    changes.external_id = { from: current.externalId, to: patch.external_id };
  if (patch.groups !== undefined) {
    const groups = normaliseGroups(patch.groups);
    if (!sameGroups(groups, current.groups)) changes.groups = { from: current.groups, to: groups };
  }
  return changes;
}

/** Whether the change takes an active admin away (demotion or suspension). */
function takesAdminAway(current: { role: Role; status: string }, role: Role, status: string): boolean {
  return (
    current.role === "institution_admin" &&
    current.status === "active" &&
    (role !== "institution_admin" || status !== "active")
  );
}

/**
 * Changes a member. A role change reaches the member's sessions and tokens on their next request
 * (their gates re-read the principal); a suspension revokes every one of them in the same batch.
 */
export async function updateMember(args: {
  env: Env;
  principal: Principal;
  institutionId: string;
  memberId: string;
  patch: MemberPatch;
}) {
  const { env, principal, patch } = args;
  const current = await getMember(env, principal, args.institutionId, args.memberId);
  const institutionId = args.institutionId;
  const callerRole = principal.user.role;
  if (!mayGrant(callerRole, current.role as Role)) throw roleCeilingError(callerRole, current.role);
  if (patch.role && !mayGrant(callerRole, patch.role)) throw roleCeilingError(callerRole, patch.role);
  const changes = changesOf(current, patch);
  if (Object.keys(changes).length === 0) return current;

  const db = database(env.DB);
  const now = nowIso();
  const role = (changes.role?.to as Role | undefined) ?? current.role;
  const status = (changes.status?.to as string | undefined) ?? current.status;
  const statements: Statement[] = [];
  if (takesAdminAway(current, role, status))
    statements.push(batchGuard(db, anotherActiveAdmin(institutionId, current.id)));
  const reactivates = current.status === "suspended" && status === "active";
  if (reactivates) statements.push(batchGuard(db, seatsAllow(institutionId, 1)));
  statements.push(
    db
      .update(users)
      .set({
        ...(changes.name ? { name: patch.name } : {}),
        ...(changes.role ? { role } : {}),
        ...(changes.status ? { status: status as "active" | "suspended" } : {}),
        ...(changes.external_id ? { externalId: patch.external_id ?? null } : {}),
        updatedAt: now,
      })
      .where(and(eq(users.id, current.id), eq(users.institutionId, institutionId))),
  );
  if (changes.groups) {
    const groups = changes.groups.to as string[];
    statements.push(db.delete(memberGroups).where(eq(memberGroups.userId, current.id)));
    if (groups.length > 0)
      statements.push(
        db
          .insert(memberGroups)
          .values(groups.map((groupName) => ({ institutionId, userId: current.id, groupName }))),
      );
  }
  const suspends = status === "suspended" && current.status !== "suspended";
  if (suspends) statements.push(revokeTokensOf(db, [current.id], now));
  const event = memberUpdated(institutionId, current.id, changes, now);
  statements.push(db.insert(outboxEvents).values(event));
  try {
    await db.batch(statements as [Statement, ...Statement[]]);
  } catch (error) {
    if (isBatchGuardFailure(error)) {
      throw reactivates && !takesAdminAway(current, role, status) ? seatError() : lastAdminError(reactivates);
    }
    throw uniqueConflict(error) ?? error;
  }
  if (suspends) await revokeGates(env, await tokensRevokedAt(db, [current.id], now));
  else if (changes.role) await refreshPrincipals(env, { userId: current.id });
  await publishEvents(env, [event.id]);
  const row = await findMember(db, institutionId, current.id);
  if (!row) throw new ApiError("not_found", `No member ${current.id}.`);
  return row;
}

function lastAdminError(orSeats = false): ApiError {
  return new ApiError(
    "last_admin",
    `This would leave the institution without an active institution admin${orSeats ? " (or exceed its seats)" : ""}; make another member admin first.`,
  );
}

/**
 * Removes a member from the institution: the user keeps its learning history (the institution's
 * reports still count it) but leaves the institution, cannot sign in, and every token it holds is
 * revoked in the same batch, so its next request is 401.
 */
export async function removeMember(args: {
  env: Env;
  principal: Principal;
  institutionId: string;
  memberId: string;
}): Promise<void> {
  const { env, principal, institutionId } = args;
  const current = await getMember(env, principal, institutionId, args.memberId);
  if (!mayGrant(principal.user.role, current.role)) throw roleCeilingError(principal.user.role, current.role);
  const db = database(env.DB);
  const now = nowIso();
  const event = memberRemoved(institutionId, current.id, now);
  const statements: Statement[] = [];
  if (takesAdminAway(current, "learner", "suspended"))
    statements.push(batchGuard(db, anotherActiveAdmin(institutionId, current.id)));
  statements.push(
    db.delete(memberGroups).where(eq(memberGroups.userId, current.id)),
    db.delete(invitations).where(eq(invitations.userId, current.id)),
    revokeTokensOf(db, [current.id], now),
    db
      .update(users)
      .set({ institutionId: null, status: "suspended", externalId: null, updatedAt: now })
      .where(and(eq(users.id, current.id), eq(users.institutionId, institutionId))),
    db.insert(outboxEvents).values(event),
  );
  try {
    await db.batch(statements as [Statement, ...Statement[]]);
  } catch (error) {
    if (isBatchGuardFailure(error)) throw lastAdminError();
    throw error;
  }
  await revokeGates(env, await tokensRevokedAt(db, [current.id], now));
  await publishEvents(env, [event.id]);
}
