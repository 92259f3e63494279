import { eq } from "drizzle-orm";
import { memberGroups, type Role, users } from "../../db/schema";
import { batchGuard, isBatchGuardFailure } from "../../platform/batch";
import { ApiError } from "../../platform/errors";
import { newId, nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { emailClaims } from "../../platform/service/directory";
import { type MemberChanges, memberCreated, normaliseGroups, sameGroups } from "./events";
import { reapplyWhileMemberChanges, writeMemberChange } from "./member-change";
import type { MemberRow } from "./present";
import { findMember, seatsAllow } from "./queries";

/**
 * Members as an identity provider makes them (SSO sign-in; SCIM may use the same): no principal asks,
 * the institution's IdP does, so these take a plain service context. They keep the members API's
 * rules — the same `member.*` events, the seat limit, the last-admin guard — and ride the caller's
 * own statements (e.g. the IdP identity's link) in the same batch.
 */

/** Users made by an IdP sign in through it: no password matches this. */
export const NO_PASSWORD_SSO = "!sso-only";

export type UserRow = typeof users.$inferSelect;

/** Why an IdP's person cannot be signed in as a member (the caller logs and answers it). */
export class MemberProvisionRefused extends Error {
  constructor(
    readonly reason: "member_suspended" | "seats_exhausted" | "member_of_other_institution",
    detail: string,
  ) {
    super(detail);
  }
}

export interface IdpPerson {
  email: string;
  /** Null: not mapped (a new member is named after the e-mail; an existing one keeps theirs). */
  name: string | null;
  /** Null: not mapped (a new member is a learner; an existing one keeps theirs). Already capped by the caller. */
  role: Exclude<Role, "platform_admin"> | null;
  /** Null: not mapped (groups are left as they are). */
  groups: string[] | null;
}

/** The user with this e-mail address, if any (any institution: the caller checks whose it is). */
export async function userByEmail(ctx: ServiceContext, email: string): Promise<UserRow | undefined> {
  return ctx.db.select().from(users).where(eq(users.email, email.trim().toLowerCase())).get();
}

function nameFromEmail(email: string): string {
  return email.slice(0, email.indexOf("@")) || email;
}

/**
 * Creates an `active` member for an IdP's person (just-in-time provisioning): the mapped role (else
 * learner) and groups, `member.created`, one seat (refused when none is left). `alongside(userId)`
 * rides in the same batch. Returns null when the e-mail address was taken meanwhile (a twin sign-in
 * won the race): the caller looks again.
 */
export async function provisionMember(
  ctx: ServiceContext,
  input: { institutionId: string; person: IdpPerson; alongside: (userId: string) => Writable[] },
): Promise<UserRow | null> {
  const { institutionId, person } = input;
  const { db } = ctx;
  const now = nowIso(ctx.now());
  const groups = normaliseGroups(person.groups ?? []);
  const user: UserRow = {
    id: newId("usr"),
    number: null, // allocated by the insert itself (a trigger)
    email: person.email.trim().toLowerCase(),
    name: person.name ?? nameFromEmail(person.email),
    role: person.role ?? "learner",
    institutionId,
    passwordHash: NO_PASSWORD_SSO,
    timeZone: "UTC",
    leaderboardOptOut: false,
    status: "active",
    externalId: null,
    createdAt: now,
    updatedAt: now,
    lastActiveAt: now,
  };
  const statements: Writable[] = [
    batchGuard(db, seatsAllow(institutionId, 1)),
    db.insert(users).values(user),
  ];
  if (groups.length > 0)
    statements.push(
      db
        .insert(memberGroups)
        .values(groups.map((groupName) => ({ institutionId, userId: user.id, groupName }))),
    );
  statements.push(...input.alongside(user.id));
  try {
    await commit(ctx, {
      statements,
      events: [memberCreated(institutionId, { ...user, groups }, now)],
      claims: emailClaims(institutionId, [user.email]),
    });
  } catch (error) {
    if (isBatchGuardFailure(error))
      throw new MemberProvisionRefused(
        "seats_exhausted",
        "Every seat of the institution is taken (invited and active members count); an institution admin can free or add seats.",
      );
    if (
      /UNIQUE constraint failed/.test(
        String(error instanceof Error ? `${error.message} ${error.cause}` : error),
      )
    )
      return null;
    throw error;
  }
  return user;
}

/** Whom an IdP may sign in: a member of this institution who is not suspended. */
function refuseUnlessMaySignIn(current: MemberRow | null): asserts current is MemberRow {
  if (!current)
    throw new MemberProvisionRefused(
      "member_of_other_institution",
      "This e-mail address belongs to an account outside this institution; it cannot sign in through this institution's identity provider.",
    );
  if (current.status === "suspended")
    throw new MemberProvisionRefused(
      "member_suspended",
      "This member is suspended in Lingua; an institution admin can reactivate them.",
    );
}

/**
 * What a sign-in changes of the member: invited becomes active; the mapped name, role and groups.
 * An admin appointed by people stays one unless the mapping may grant (and so take) the role.
 */
function signInChanges(current: MemberRow, person: IdpPerson, mayGrantAdmin: boolean): MemberChanges {
  const changes: MemberChanges = {};
  if (current.status === "invited") changes.status = { from: "invited", to: "active" };
  if (person.name !== null && person.name !== current.name)
    changes.name = { from: current.name, to: person.name };
  const keepsAdmin = current.role === "institution_admin" && !mayGrantAdmin;
  if (person.role !== null && person.role !== current.role && !keepsAdmin)
    changes.role = { from: current.role, to: person.role };
  const groups = person.groups === null ? null : normaliseGroups(person.groups);
  if (groups && !sameGroups(groups, current.groups)) changes.groups = { from: current.groups, to: groups };
  return changes;
}

/**
 * Signs an existing member in through the IdP: suspended is refused; invited becomes active; the
 * mapped name, role and groups are applied (`member.updated` with what changed) and the sign-in's
 * time noted, by member-change.ts: written only while the member is as read, read again and
 * re-applied when another change overtook it (`409 conflict` after four lost races: the person
 * signs in again). A role change that would leave the institution without an active admin is not
 * made (the sign-in goes on with the member's role as it was). `alongside` rides in the same batch.
 * `current`: the member as `findMember` reads it, when the caller read it already (in its own round
 * trip). Answers the member as written.
 */
export async function signInMember(
  ctx: ServiceContext,
  input: {
    institutionId: string;
    member: UserRow;
    current?: MemberRow;
    person: IdpPerson;
    /** The connection's mapping may grant (and so take away) `institution_admin`. */
    mayGrantAdmin: boolean;
    alongside: Writable[];
  },
): Promise<UserRow> {
  const { institutionId, member, person } = input;
  if (member.institutionId !== institutionId)
    throw new MemberProvisionRefused(
      "member_of_other_institution",
      "This e-mail address belongs to an account outside this institution; it cannot sign in through this institution's identity provider.",
    );
  const now = nowIso(ctx.now());
  let read = input.current;
  const row = await reapplyWhileMemberChanges(
    async () => {
      const current: MemberRow | null = read ?? (await findMember(ctx.db, institutionId, member.id));
      read = undefined;
      refuseUnlessMaySignIn(current);
      const changes = signInChanges(current, person, input.mayGrantAdmin);
      const write = (made: MemberChanges) =>
        writeMemberChange(ctx, {
          institutionId,
          current,
          changes: made,
          alsoSet: { lastActiveAt: now },
          extra: input.alongside,
        });
      try {
        return await write(changes);
      } catch (error) {
        if (!(changes.role && error instanceof ApiError && error.code === "last_admin")) throw error;
        const { role: _kept, ...rest } = changes;
        return write(rest);
      }
    },
    () => {
      throw new ApiError(
        "conflict",
        "The member kept changing while this sign-in was applied; sign in again.",
      );
    },
  );
  const { email, name, role, status, externalId, updatedAt, lastActiveAt } = row;
  return { ...member, email, name, role, status, externalId, updatedAt, lastActiveAt };
}
