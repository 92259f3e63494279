import { attempts, type XapiActivity } from "../../../db/schema";
import { inJsonList } from "../../../platform/db";
import { inPool } from "../../../platform/delivery";
import type { ServiceContext } from "../../../platform/service/context";
import type { Fact } from "../statements";
import { eventFacts, eventPayload, progressedFact } from "./event-facts";
import { offerFacts } from "./offer";
import {
  FORWARDED_EVENTS_SQL,
  FORWARDING_ENDPOINTS_SQL,
  type ForwardedEventRow,
  type ForwardingEndpointRow,
  LESSONS_IN_PROGRESS_SQL,
  type LessonInProgressRow,
} from "./sql";

/**
 * xAPI's subscription to the outbox (platform/outbox-dispatch.ts): the learning activity of an
 * institution's members becomes facts (statements/facts.ts), offered to each of the institution's
 * enabled endpoints that wants them. The statements are built here, in the events queue's consumer,
 * never in the request that recorded the activity, and a healthy endpoint's batches get their first
 * attempt here too (offer.ts). Idempotent per event: a fact offered again makes no second statement.
 */
export const XAPI_EVENT_TYPES = [
  "attempts.recorded",
  "lesson.completed",
  "course.completed",
  "cefr.level_changed",
  "achievement.unlocked",
] as const;

type AttemptRow = typeof attempts.$inferSelect;

/**
 * The facts of `attempts.recorded` events: `answered` per attempt (read by id) and `progressed` for
 * each lesson those attempts touched that is still in progress with items done.
 */
async function attemptFacts(ctx: ServiceContext, attemptIds: string[]): Promise<AttemptRow[]> {
  if (attemptIds.length === 0) return [];
  return ctx.db.select().from(attempts).where(inJsonList(attempts.id, attemptIds));
}

async function progressFacts(ctx: ServiceContext, rows: AttemptRow[]): Promise<Fact[]> {
  const pairs = [...new Map(rows.map((a) => [`${a.userId} ${a.lessonId}`, [a.userId, a.lessonId]])).values()];
  if (pairs.length === 0) return [];
  const { results } = await ctx.d1
    .prepare(LESSONS_IN_PROGRESS_SQL)
    .bind(JSON.stringify(pairs))
    .all<LessonInProgressRow>();
  return results.map(progressedFact);
}

/** The outbox subscriber `(ctx, eventIds)`: the events' facts, offered to each endpoint that wants them. */
export async function forwardEvents(ctx: ServiceContext, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  const list = JSON.stringify(eventIds);
  const [endpointRows, eventRows] = await ctx.d1.batch<unknown>([
    ctx.d1.prepare(FORWARDING_ENDPOINTS_SQL).bind(list),
    ctx.d1.prepare(FORWARDED_EVENTS_SQL).bind(list, JSON.stringify(XAPI_EVENT_TYPES)),
  ]);
  const endpoints = (endpointRows?.results ?? []) as ForwardingEndpointRow[];
  const events = (eventRows?.results ?? []) as ForwardedEventRow[];
  if (endpoints.length === 0 || events.length === 0) return;

  // Each institution's facts, in the order the events happened.
  const facts = new Map<string, Fact[]>();
  const add = (institutionId: string, more: Fact[]) => {
    const list = facts.get(institutionId);
    if (list) list.push(...more);
    else facts.set(institutionId, [...more]);
  };
  const recorded = new Map<string, string>(); // attempt → institution
  for (const event of events) {
    const payload = eventPayload(event);
    if (event.type === "attempts.recorded") {
      const ids = Array.isArray(payload.attempt_ids) ? payload.attempt_ids : [];
      for (const id of ids) if (typeof id === "string") recorded.set(id, event.institution_id);
    } else add(event.institution_id, eventFacts(event, payload));
  }
  const attemptRows = await attemptFacts(ctx, [...recorded.keys()]);
  for (const attempt of attemptRows) {
    const institutionId = recorded.get(attempt.id);
    if (institutionId) add(institutionId, [{ verb: "answered", attempt }]);
  }
  const progressed = await progressFacts(ctx, attemptRows);
  const institutionOfUser = new Map(attemptRows.map((a) => [a.userId, recorded.get(a.id)]));
  for (const fact of progressed) {
    const institutionId = fact.verb === "progressed" ? institutionOfUser.get(fact.userId) : undefined;
    if (institutionId) add(institutionId, [fact]);
  }

  await inPool(endpoints, 6, async (endpoint) => {
    const wanted = new Set(JSON.parse(endpoint.activities) as XapiActivity[]);
    const offered = (facts.get(endpoint.institution_id) ?? []).filter((f) => wanted.has(f.verb));
    if (offered.length > 0)
      await offerFacts(ctx, { id: endpoint.id, actorFormat: endpoint.actor_format }, offered, {
        sendNow: true,
      });
  });
}
