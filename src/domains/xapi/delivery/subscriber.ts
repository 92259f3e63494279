import type { XapiActivity } from "../../../db/schema";
import { inPool } from "../../../platform/delivery";
import type { ServiceContext } from "../../../platform/service/context";
import type { AttemptFact, Fact } from "../statements";
import { eventFacts, eventPayload, progressedFact } from "./event-facts";
import { FACTS_PER_COMMIT, type Offer, openOffer } from "./offer";
import {
  ATTEMPT_FACTS_SQL,
  type AttemptFactRow,
  attemptFactOf,
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

type Payload = ReturnType<typeof eventPayload>;

/**
 * The attempts of `attempts.recorded` events, read by id. The subscriber reads them group by group
 * (about one commit's worth each), so the first group's statements are committed and on their way to
 * the LRS while the next group is read: reading everything first kept the first send waiting for the
 * whole invocation's reads.
 */
async function attemptFacts(ctx: ServiceContext, attemptIds: string[]): Promise<AttemptFact[]> {
  if (attemptIds.length === 0) return [];
  const rows = await ctx.d1.prepare(ATTEMPT_FACTS_SQL).bind(JSON.stringify(attemptIds)).raw<AttemptFactRow>();
  return rows.map(attemptFactOf);
}

/**
 * `progressed` for each lesson those attempts touched that is still in progress with items done,
 * each (learner, lesson) read once per invocation: a later group's attempts in a lesson read before
 * would read the same progress, so the same fact, again.
 */
async function progressFacts(ctx: ServiceContext, rows: AttemptFact[], seen: Set<string>): Promise<Fact[]> {
  const pairs = new Map<string, [string, string]>();
  for (const a of rows) {
    const key = `${a.userId} ${a.lessonId}`;
    if (!seen.has(key)) pairs.set(key, [a.userId, a.lessonId]);
  }
  for (const key of pairs.keys()) seen.add(key);
  if (pairs.size === 0) return [];
  const { results } = await ctx.d1
    .prepare(LESSONS_IN_PROGRESS_SQL)
    .bind(JSON.stringify([...pairs.values()]))
    .all<LessonInProgressRow>();
  return results.map(progressedFact);
}

/**
 * The events in groups, in the order they happened, each naming about one commit's worth of facts
 * (FACTS_PER_COMMIT attempts, an event of other facts counting one; an event is never split).
 */
function eventGroups(events: ForwardedEventRow[]): { event: ForwardedEventRow; payload: Payload }[][] {
  const groups: { event: ForwardedEventRow; payload: Payload }[][] = [];
  let group: { event: ForwardedEventRow; payload: Payload }[] = [];
  let size = 0;
  for (const event of events) {
    const payload = eventPayload(event);
    const facts =
      event.type === "attempts.recorded" && Array.isArray(payload.attempt_ids)
        ? payload.attempt_ids.length
        : 1;
    if (group.length > 0 && size + facts > FACTS_PER_COMMIT) {
      groups.push(group);
      group = [];
      size = 0;
    }
    group.push({ event, payload });
    size += facts;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** One group's facts, per institution, in the order the events happened. */
async function groupFacts(
  ctx: ServiceContext,
  group: { event: ForwardedEventRow; payload: Payload }[],
  seenLessons: Set<string>,
): Promise<Map<string, Fact[]>> {
  const facts = new Map<string, Fact[]>();
  const listOf = (institutionId: string) => {
    const list = facts.get(institutionId);
    if (list) return list;
    const made: Fact[] = [];
    facts.set(institutionId, made);
    return made;
  };
  const recorded = new Map<string, string>(); // attempt → institution
  for (const { event, payload } of group) {
    if (event.type === "attempts.recorded") {
      const ids = Array.isArray(payload.attempt_ids) ? payload.attempt_ids : [];
      for (const id of ids) if (typeof id === "string") recorded.set(id, event.institution_id);
    } else listOf(event.institution_id).push(...eventFacts(event, payload));
  }
  const attemptRows = await attemptFacts(ctx, [...recorded.keys()]);
  for (const attempt of attemptRows) {
    const institutionId = recorded.get(attempt.id);
    if (institutionId) listOf(institutionId).push({ verb: "answered", attempt });
  }
  const progressed = await progressFacts(ctx, attemptRows, seenLessons);
  const institutionOfUser = new Map(attemptRows.map((a) => [a.userId, recorded.get(a.id)]));
  for (const fact of progressed) {
    const institutionId = fact.verb === "progressed" ? institutionOfUser.get(fact.userId) : undefined;
    if (institutionId) listOf(institutionId).push(fact);
  }
  return facts;
}

/**
 * The outbox subscriber `(ctx, eventIds)`: the events' facts, offered to each endpoint that wants
 * them, group by group (`eventGroups`): one offer per endpoint for the whole invocation, so its first
 * attempts start once the first group is committed and go on while the next groups are read.
 */
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

  const wanted = new Map(endpoints.map((e) => [e.id, new Set(JSON.parse(e.activities) as XapiActivity[])]));
  const offers = new Map<string, Promise<Offer>>();
  const offerOf = (endpoint: ForwardingEndpointRow) => {
    let offer = offers.get(endpoint.id);
    if (!offer) {
      offer = openOffer(ctx, { id: endpoint.id, actorFormat: endpoint.actor_format }, { sendNow: true });
      offers.set(endpoint.id, offer);
    }
    return offer;
  };
  const seenLessons = new Set<string>();
  let stopped: { error: unknown } | null = null;
  try {
    for (const group of eventGroups(events)) {
      const facts = await groupFacts(ctx, group, seenLessons);
      await inPool(endpoints, 6, async (endpoint) => {
        const verbs = wanted.get(endpoint.id);
        const offered = (facts.get(endpoint.institution_id) ?? []).filter((f) => verbs?.has(f.verb));
        if (offered.length > 0) await (await offerOf(endpoint)).add(offered);
      });
    }
  } catch (error) {
    stopped = { error };
  }
  // Every offer's sends end within this invocation (its I/O is its own), a failed one's too.
  const closed = await Promise.allSettled([...offers.values()].map(async (offer) => (await offer).close()));
  if (stopped) throw stopped.error;
  const failed = closed.find((c): c is PromiseRejectedResult => c.status === "rejected");
  if (failed) throw failed.reason;
}
