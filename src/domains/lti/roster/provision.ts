import { and, eq, inArray } from "drizzle-orm";
import { ltiUserLinks, users } from "../../../db/schema";
import { batchGuard, chunk, isBatchGuardFailure } from "../../../platform/batch";
import { newId, nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { emailClaims } from "../../../platform/service/directory";
import { memberCreated } from "../../members/events";
import { seatsAllow } from "../../members/queries";
import { launchRole } from "../claims";
import { identityFrom, NO_PASSWORD, placeholderEmail, type UserRow } from "../launch/provision-user";
import type { ConsumerRow } from "../registrations/service";
import type { RosterMember } from "./nrps";

/**
 * A roster's active members made members of the registration's institution, as their first launch
 * would make them: a user linked by (registration, `sub`), active, signing in through the LMS only,
 * with the name and e-mail the roster gives (cleaned by the launch's rules; an e-mail another account
 * holds is left out), taking a seat (the seat guard of members) and announced by `member.created`.
 * Members already linked are left as they are (their next launch updates them). Idempotent: a sync
 * run twice, or two at once, links each person once (the link's primary key decides).
 */

/** New members per D1 batch: two statements each, the guard, and their events. */
const PROVISION_CHUNK = 25;

export interface SyncCounts {
  /** Active members of the roster. */
  active: number;
  /** Inactive or deleted members, not provisioned. */
  inactive: number;
  created: number;
  already_linked: number;
  /** Active members left out because every seat was taken. */
  seats_exhausted: number;
}

export const noCounts = (): SyncCounts => ({
  active: 0,
  inactive: 0,
  created: 0,
  already_linked: 0,
  seats_exhausted: 0,
});

/** The Lingua users of these subs of the registration. */
export async function linkedUsers(
  ctx: ServiceContext,
  consumerId: string,
  subs: string[],
): Promise<Map<string, string>> {
  const linked = new Map<string, string>();
  for (const part of chunk(subs, 90)) {
    const rows = await ctx.db
      .select({ sub: ltiUserLinks.sub, userId: ltiUserLinks.userId })
      .from(ltiUserLinks)
      .where(and(eq(ltiUserLinks.consumerId, consumerId), inArray(ltiUserLinks.sub, part)));
    for (const row of rows) linked.set(row.sub, row.userId);
  }
  return linked;
}

async function takenEmails(ctx: ServiceContext, emails: string[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (const part of chunk(emails, 90)) {
    const rows = await ctx.db.select({ email: users.email }).from(users).where(inArray(users.email, part));
    for (const row of rows) taken.add(row.email);
  }
  return taken;
}

interface NewUser {
  user: UserRow;
  sub: string;
}

function statementsOf(ctx: ServiceContext, consumer: ConsumerRow, fresh: NewUser[], now: string) {
  const { db } = ctx;
  return {
    claims: emailClaims(
      consumer.institutionId,
      fresh.map(({ user }) => user.email),
    ),
    statements: [
      batchGuard(db, seatsAllow(consumer.institutionId, fresh.length)),
      ...fresh.flatMap(({ user, sub }) => [
        db.insert(users).values(user),
        db.insert(ltiUserLinks).values({ consumerId: consumer.id, sub, userId: user.id, createdAt: now }),
      ]),
    ],
    events: fresh.map(({ user }) => memberCreated(consumer.institutionId, { ...user, groups: [] }, now)),
  };
}

/** One new member on its own (a chunk that did not fit or raced): created, linked already, or no seat. */
async function provisionOne(
  ctx: ServiceContext,
  consumer: ConsumerRow,
  fresh: NewUser,
  now: string,
): Promise<"created" | "already_linked" | "seats_exhausted"> {
  try {
    await commit(ctx, statementsOf(ctx, consumer, [fresh], now));
    return "created";
  } catch (error) {
    if (isBatchGuardFailure(error)) return "seats_exhausted";
    if ((await linkedUsers(ctx, consumer.id, [fresh.sub])).size > 0) return "already_linked";
    // The e-mail address was taken in between: the person without it.
    const placeholder = await placeholderEmail(consumer.id, fresh.sub);
    if (fresh.user.email !== placeholder)
      return provisionOne(ctx, consumer, { ...fresh, user: { ...fresh.user, email: placeholder } }, now);
    throw error;
  }
}

/** Provisions the roster's active members that are not linked yet; adds what happened to `counts`. */
export async function provisionRoster(
  ctx: ServiceContext,
  consumer: ConsumerRow,
  roster: RosterMember[],
  counts: SyncCounts,
  /** Called before each chunk (a queued sync renews its lease there, and throws when it lost it). */
  beforeChunk: () => Promise<void> = async () => undefined,
): Promise<void> {
  const active = roster.filter((m) => m.status === "Active");
  counts.active += active.length;
  counts.inactive += roster.length - active.length;
  const linked = await linkedUsers(
    ctx,
    consumer.id,
    active.map((m) => m.user_id),
  );
  const seen = new Set<string>();
  const pending = active.filter((m) => {
    if (linked.has(m.user_id) || seen.has(m.user_id)) {
      counts.already_linked += 1;
      return false;
    }
    seen.add(m.user_id);
    return true;
  });
  const people = pending.map((m) => identityFrom({ ...m, sub: m.user_id }, launchRole(m.roles)));
  const taken = await takenEmails(
    ctx,
    people.flatMap((p) => (p.email ? [p.email] : [])),
  );
  const now = nowIso(ctx.now());
  const fresh: NewUser[] = [];
  for (const person of people) {
    const email =
      person.email && !taken.has(person.email)
        ? person.email
        : await placeholderEmail(consumer.id, person.sub);
    taken.add(email);
    fresh.push({
      sub: person.sub,
      user: {
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
        lastActiveAt: null,
      },
    });
  }
  let seatsLeft = true;
  for (const part of chunk(fresh, PROVISION_CHUNK)) {
    await beforeChunk();
    if (!seatsLeft) {
      counts.seats_exhausted += part.length;
      continue;
    }
    try {
      await commit(ctx, statementsOf(ctx, consumer, part, now));
      counts.created += part.length;
      continue;
    } catch {
      // Not every seat it needs is free, or a launch or another sync linked someone meanwhile: one by one.
    }
    for (const one of part) {
      const outcome = seatsLeft ? await provisionOne(ctx, consumer, one, now) : "seats_exhausted";
      counts[outcome] += 1;
      if (outcome === "seats_exhausted") seatsLeft = false;
    }
  }
}
