import { and, eq, isNull, ne, sql } from "drizzle-orm";
import { type MemberStatus, users } from "../../db/schema";
import { batchGuard, isBatchGuardFailure } from "../../platform/batch";
import { DECOY_PASSWORD_HASH } from "../../platform/crypto/passwords";
import { ApiError } from "../../platform/errors";
import { newId, nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { emailClaims } from "../../platform/service/directory";
import { groupInserts } from "./directory-groups";
import { memberCreated, normaliseGroups } from "./events";
import type { MemberRow } from "./present";
import { findMember, seatsAllow } from "./queries";
import { seatError, uniqueConflict } from "./rules";

/**
 * Members as an institution's own directory keeps them (SCIM provisioning from Okta or Entra): the
 * same rows, guards and `member.*` events as the members API (service.ts), without a caller's role —
 * the directory's bearer token speaks for the institution, and never grants a role (its members are
 * learners unless an administrator changes them). Each write is one `commit`. Here: a member's
 * arrival (created, or rejoining); a change of one is directory-change.ts, a group's membership
 * directory-groups.ts, a removal the members API's own (member-change.ts).
 */

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
