import { and, eq } from "drizzle-orm";
import { ltiUserLinks, type Role, users } from "../../../db/schema";
import { batchGuard, isBatchGuardFailure } from "../../../platform/batch";
import { sha256Hex } from "../../../platform/crypto/encoding";
import { newId, nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { claimAll, emailClaims } from "../../../platform/service/directory";
import { isSafeForDisplay, PERSON_NAME, sanitizeDisplayText } from "../../../platform/text";
import { memberCreated } from "../../members/events";
import { refreshPrincipals } from "../../members/principal-refresh";
import { seatsAllow } from "../../members/queries";
import { type ConsumerRow, isUniqueViolation } from "../registrations/service";
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

async function linkedUser(
  ctx: ServiceContext,
  consumerId: string,
  sub: string,
): Promise<UserRow | undefined> {
  const row = await ctx.db
    .select({ user: users })
    .from(ltiUserLinks)
    .innerJoin(users, eq(users.id, ltiUserLinks.userId))
    .where(and(eq(ltiUserLinks.consumerId, consumerId), eq(ltiUserLinks.sub, sub)))
    .get();
  return row?.user;
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
  if (existing) {
    if (existing.status === "suspended")
      throw new LaunchRefusal(
        "member_suspended",
        "This member is suspended in Lingua; an institution admin can reactivate them.",
        consumer,
      );
    const changes: Partial<UserRow> = { lastActiveAt: nowIso(ctx.now()) };
    if (person.name !== existing.name) changes.name = person.name;
    if (
      person.email &&
      person.email !== existing.email &&
      (await emailIsFree(ctx, person.email, existing.id))
    )
      changes.email = person.email;
    const role = roleAfterLaunch(existing.role, person.role);
    if (role !== existing.role) changes.role = role;
    // A new address is unique across every database (design/multi-database.md): claimed first outside
    // DB, refused by DB's triggers when claimed elsewhere. Taken: the member keeps the address they had.
    if (changes.email)
      await claimAll(ctx, emailClaims(consumer.institutionId, [changes.email])).catch(() => {
        delete changes.email;
      });
    if (Object.keys(changes).length > 1) changes.updatedAt = changes.lastActiveAt;
    const update = () => db.update(users).set(changes).where(eq(users.id, existing.id)).returning();
    const [updated] = await update().catch((error: unknown) => {
      if (!changes.email || !isUniqueViolation(error)) throw error;
      delete changes.email;
      return update();
    });
    // The member's other sessions and tokens carry name, e-mail and role: re-read on their next request.
    if (updated && (["name", "email", "role"] as const).some((field) => updated[field] !== existing[field]))
      await refreshPrincipals(ctx, { userId: existing.id });
    return updated ?? existing;
  }

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
    if (winner) return winner;
    if (email !== (await placeholderEmail(consumer.id, person.sub)))
      return provisionUser(ctx, { consumer, person: { ...person, email: null } });
    throw error;
  }
}
