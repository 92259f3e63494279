import { and, eq } from "drizzle-orm";
import { ltiUserLinks, type Role, users } from "../../../db/schema";
import { batchGuard, isBatchGuardFailure } from "../../../platform/batch";
import { sha256Hex } from "../../../platform/crypto/encoding";
import { ApiError } from "../../../platform/errors";
import { newId, nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { emailClaims } from "../../../platform/service/directory";
import { isSafeForDisplay, PERSON_NAME, sanitizeDisplayText } from "../../../platform/text";
import { type MemberChanges, memberCreated } from "../../members/events";
import { reapplyWhileMemberChanges, writeMemberChange } from "../../members/member-change";
import type { MemberRow } from "../../members/present";
import { memberColumns, seatsAllow, toMemberRow } from "../../members/queries";
import type { ConsumerRow } from "../registrations/service";
import { LaunchRefusal } from "./refusal";

/** Users made by a launch sign in through their platform only: no password matches this. */
export const NO_PASSWORD = "!lti-launch-only";

export type UserRow = typeof users.$inferSelect;

export interface Identity {
  sub: string;
  name: string;
  email: string | null;
  role: "instructor" | "learner";
}

/** A launch's user when the platform's name claims leave nothing to show. */
const NAMELESS = "LTI user";

/**
 * What the id_token says about the person: `name`, else given + family name, cleaned by the
 * display-text rule of a person's name (control and bidirectional formatting characters dropped,
 * white space collapsed, cut to 200 characters) rather than refusing the launch; `email` when it is
 * one, and a safe one.
 */
export function identityFrom(claims: Record<string, unknown>, role: Identity["role"]): Identity {
  const given = sanitizeDisplayText(claims.given_name, PERSON_NAME);
  const family = sanitizeDisplayText(claims.family_name, PERSON_NAME);
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : null;
  return {
    sub: claims.sub as string,
    name:
      sanitizeDisplayText(claims.name, PERSON_NAME) ??
      sanitizeDisplayText([given, family].filter(Boolean).join(" "), PERSON_NAME) ??
      NAMELESS,
    email:
      email && /^[^@\s]+@[^@\s]+$/.test(email) && email.length <= 254 && isSafeForDisplay(email)
        ? email
        : null,
    role,
  };
}

/** An address for a user whose platform sent none (or one another account has): unique, never deliverable. */
export async function placeholderEmail(consumerId: string, sub: string): Promise<string> {
  return `lti-${(await sha256Hex(`${consumerId}\n${sub}`)).slice(0, 24)}@lti.invalid`;
}

async function emailIsFree(ctx: ServiceContext, email: string, userId: string | null): Promise<boolean> {
  const holder = await ctx.db.select({ id: users.id }).from(users).where(eq(users.email, email)).get();
  return !holder || holder.id === userId;
}

/** A learner may become an instructor through a launch; admins and lowered roles are changed by people only. */
function roleAfterLaunch(current: Role, launched: Identity["role"]): Role {
  return current === "learner" && launched === "instructor" ? "instructor" : current;
}

/** A linked user, and the same user as a member (its groups too), which a member change compares. */
interface LinkedUser {
  user: UserRow;
  member: MemberRow;
}

async function linkedUser(
  ctx: ServiceContext,
  consumerId: string,
  sub: string,
): Promise<LinkedUser | undefined> {
  const row = await ctx.db
    .select({ user: users, member: memberColumns })
    .from(ltiUserLinks)
    .innerJoin(users, eq(users.id, ltiUserLinks.userId))
    .where(and(eq(ltiUserLinks.consumerId, consumerId), eq(ltiUserLinks.sub, sub)))
    .get();
  return row && { user: row.user, member: toMemberRow(row.member) };
}

/**
 * A launch of a person already linked: suspended (or removed) is refused; otherwise name, e-mail
 * and role follow the platform's claims as a member change of every other door does
 * (members/member-change.ts: `member.updated` with each field's `from` and `to`, the member's tokens
 * told, written only while the member is as read and re-applied when another request changed it in
 * between). An e-mail another account has is left out. A launch that changes nothing only notes
 * that the member was active.
 */
async function relaunchedUser(
  ctx: ServiceContext,
  input: { consumer: ConsumerRow; person: Identity; linked: LinkedUser },
): Promise<UserRow> {
  const { consumer, person } = input;
  const { db } = ctx;
  const institutionId = consumer.institutionId;
  const at = nowIso(ctx.now());
  const active = (id: string) => db.update(users).set({ lastActiveAt: at }).where(eq(users.id, id));
  let read: LinkedUser | undefined = input.linked;
  let email = person.email;
  const launchAs = async (): Promise<UserRow> => {
    const linked = read ?? (await linkedUser(ctx, consumer.id, person.sub));
    read = undefined;
    if (!linked) return provisionUser(ctx, { consumer, person });
    const member = linked.user;
    // A removed member is suspended and of no institution.
    if (member.status === "suspended" || member.institutionId !== institutionId)
      throw new LaunchRefusal(
        "member_suspended",
        "This member is suspended in Lingua; an institution admin can reactivate them.",
        consumer,
      );
    const changes: MemberChanges = {};
    if (person.name !== member.name) changes.name = { from: member.name, to: person.name };
    if (email && email !== member.email && (await emailIsFree(ctx, email, member.id)))
      changes.email = { from: member.email, to: email };
    const role = roleAfterLaunch(member.role, person.role);
    if (role !== member.role) changes.role = { from: member.role, to: role };
    if (Object.keys(changes).length === 0) {
      await active(member.id).run();
      return { ...member, lastActiveAt: at };
    }
    const write = (made: MemberChanges) =>
      writeMemberChange(ctx, {
        institutionId,
        current: linked.member,
        changes: made,
        alsoSet: { lastActiveAt: at },
      });
    let row: MemberRow;
    try {
      row = await write(changes);
    } catch (error) {
      // The address was taken in between (here or, claimed first, in another database): kept as it was.
      if (!(changes.email && error instanceof ApiError && error.code === "email_taken")) throw error;
      email = null;
      const { email: _taken, ...rest } = changes;
      row = await write(rest);
    }
    const { email: written, name, role: roleNow, status, updatedAt, lastActiveAt } = row;
    return { ...member, email: written, name, role: roleNow, status, updatedAt, lastActiveAt };
  };
  // Overtaken again and again: the launch goes on as the member now is; the next launch applies it.
  return reapplyWhileMemberChanges(
    launchAs,
    async () => ((await linkedUser(ctx, consumer.id, person.sub)) ?? input.linked).user,
  );
}

/**
 * The user a launch is for: found by (registration, `sub`), or created as a member of the
 * registration's institution. Name and e-mail follow the platform's claims; two first launches of
 * one person at once both try to insert the link, one wins, and the other uses the winner's user.
 */
export async function provisionUser(
  ctx: ServiceContext,
  input: { consumer: ConsumerRow; person: Identity },
): Promise<UserRow> {
  const { consumer, person } = input;
  const { db } = ctx;
  const existing = await linkedUser(ctx, consumer.id, person.sub);
  if (existing) return relaunchedUser(ctx, { consumer, person, linked: existing });

  const email =
    person.email && (await emailIsFree(ctx, person.email, null))
      ? person.email
      : await placeholderEmail(consumer.id, person.sub);
  const now = nowIso(ctx.now());
  const user: UserRow = {
    id: newId("usr"),
    number: null, // allocated by the insert itself (a trigger)
    email,
    name: person.name,
    role: person.role,
    institutionId: consumer.institutionId,
    passwordHash: NO_PASSWORD,
    timeZone: "UTC",
    leaderboardOptOut: false,
    status: "active",
    externalId: null,
    createdAt: now,
    updatedAt: now,
    lastActiveAt: now,
  };
  const event = memberCreated(consumer.institutionId, { ...user, groups: [] }, now);
  try {
    // A new member takes a seat: the guard refuses the whole batch when none is left.
    await commit(ctx, {
      claims: emailClaims(consumer.institutionId, [user.email]),
      statements: [
        batchGuard(db, seatsAllow(consumer.institutionId, 1)),
        db.insert(users).values(user),
        db
          .insert(ltiUserLinks)
          .values({ consumerId: consumer.id, sub: person.sub, userId: user.id, createdAt: now }),
      ],
      events: [event],
    });
    return user;
  } catch (error) {
    if (isBatchGuardFailure(error))
      throw new LaunchRefusal(
        "seats_exhausted",
        "Every seat of the institution is taken; an institution admin can free or add seats.",
        consumer,
      );
    // A twin launch linked the person first (or took the e-mail address in between): use its user.
    const winner = await linkedUser(ctx, consumer.id, person.sub);
    if (winner) return winner.user;
    if (email !== (await placeholderEmail(consumer.id, person.sub)))
      return provisionUser(ctx, { consumer, person: { ...person, email: null } });
    throw error;
  }
}
