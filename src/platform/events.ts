import { z } from "zod";
import type { outboxEvents } from "../db/schema";
import type { Env } from "../env";
import { newId } from "./ids";
import { type SentFrom, sendAll } from "./queue";

/**
 * Domain events. Each is a row of the outbox, written in the same D1 batch as the change it
 * reports; consumers (webhooks, xAPI, LTI passback) read the outbox, so nothing is lost in between.
 */
export const EVENT_TYPES = {
  ping: "A test delivery sent by POST /api/integrations/webhooks/{id}/test; never sent otherwise.",
  "lesson.completed": "A learner completed every item of a lesson.",
  "course.completed": "A learner completed every lesson of a course.",
  "achievement.unlocked": "A learner unlocked an achievement.",
  "cefr.level_changed": "A learner's CEFR level changed for a skill (or overall).",
  "streak.milestone":
    "A learner's current daily streak (ending today or yesterday) reached a milestone (3, 7, 14, 30, 60, 100, 365 days); once per streak, also when late-synced days make it reach one. `day` is the learner's day on which it did.",
  "member.created": "A member joined the institution.",
  "member.updated":
    "A member's name, e-mail, role, status, external_id or groups changed, whichever way (the members API, a bulk upload, SCIM, an SSO sign-in, an LTI launch); `changes` says from what (the member just before) to what.",
  "member.removed": "A member left the institution.",
  "export.completed":
    "A CSV export finished and can be downloaded; `download_url` is a path relative to the API's base URL.",
  "export.failed": "A CSV export failed; `error` says why.",
  "xapi_endpoint.failing":
    "An xAPI endpoint's Learning Record Store has failed every request for 24 hours without a success; once per failing run. `last_error` says what it answered last.",
  "subscription.updated":
    "The institution's subscription changed as Stripe reports it: its plan, status, seats, billing period or cancellation at period end; `changes` says from what to what. Not sent when a re-read from Stripe finds nothing new.",
  "trial.will_end":
    "The institution's trial ends in 3 days (Stripe's notice); `at_trial_end` says whether the paid subscription starts or the institution falls back to Free.",
  "invoice.payment_failed":
    "A payment of the institution's subscription failed; the subscription is `past_due` and keeps its plan while Stripe retries (`next_payment_attempt`), then falls back to Free.",
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/**
 * Events the platform's own subscribers consume and nobody else sees: never subscribable by a
 * webhook (not through `*` either), never fanned out as a delivery, never listed by `GET /api/events`.
 */
export const INTERNAL_EVENT_TYPES = {
  "attempts.recorded":
    "A recording request stored new attempts of a member of an institution: `{user_id, attempt_ids}` (xAPI forwarding builds its statements from them).",
} as const;

export type InternalEventType = keyof typeof INTERNAL_EVENT_TYPES;

/** Whether `type` is one of the platform's internal events. */
export function isInternalEvent(type: string): boolean {
  return Object.hasOwn(INTERNAL_EVENT_TYPES, type);
}

/** The types a webhook can subscribe to and the events list shows: all but `ping`, which only the test endpoint sends. */
export const SUBSCRIBABLE_TYPES = (Object.keys(EVENT_TYPES) as EventType[]).filter((t) => t !== "ping");

/** Events (and with them their webhook deliveries and attempts) are kept for 30 days. */
export const EVENT_RETENTION_MS = 30 * 86_400_000;

/**
 * Internal events (INTERNAL_EVENT_TYPES) are nobody's to list or redeliver: once every subscriber took
 * one (`dispatched_at`), it is kept a day, for an operator to look at, then deleted. Undispatched ones
 * stay for the dispatcher's sweep, up to EVENT_RETENTION_MS like every event. At one recording
 * request a learner-day, an `attempts.recorded` event is most of the outbox's bytes
 * (docs/design/capacity.md, "The outbox").
 */
export const INTERNAL_EVENT_RETENTION_MS = 86_400_000;

/**
 * The internal types as SQL text, the condition of the partial index `outbox_events_internal_idx`
 * (db/schema/events.ts): a statement that means to use that index repeats it literally.
 */
export const INTERNAL_EVENTS_CONDITION = "type = 'attempts.recorded'";

export type OutboxRow = typeof outboxEvents.$inferInsert;

/**
 * Outbox event ids per events-queue message. With the consumer's max_batch_size of 10 (wrangler.toml)
 * one invocation takes at most 100 events, as many as when every message carried one: with 50 ids
 * and batches of 100 (5,000 events: 50,000 deliveries to fan out in one invocation with 10 webhooks) the
 * webhooks benchmark's burst failed every attempt. Publishing 10,000 events still takes 1,000
 * messages in 10 `sendBatch` calls instead of 10,000 in 100.
 */
export const MAX_EVENTS_PER_MESSAGE = 10;

/**
 * A message of the events queue: committed outbox events to fan out, `{event_ids}`. A body of any
 * other shape is dead-lettered; how a message shape changes across a deploy:
 * docs/design/format-changes.md.
 */
export const EventMessage = z.object({
  event_ids: z.array(z.string().min(1)).min(1).max(MAX_EVENTS_PER_MESSAGE),
});
export type EventMessage = z.output<typeof EventMessage>;

export function domainEvent(
  type: EventType | InternalEventType,
  scope: { institutionId: string | null; userId: string | null },
  data: Record<string, unknown>,
  createdAt: string,
): OutboxRow {
  return {
    id: newId("evt"),
    type,
    institutionId: scope.institutionId,
    userId: scope.userId,
    payload: data,
    createdAt,
  };
}

/**
 * Hands committed outbox events to the fan-out queue, up to `MAX_EVENTS_PER_MESSAGE` ids per message
 * in their order (10,000 events: 1,000 messages, 10 `sendBatch` calls). Never throws: an event whose send
 * failed is picked up by the scheduled sweep a minute later, so the caller's response does not depend
 * on it.
 */
export async function publishEvents(
  from: { env: Env } & SentFrom,
  eventIds: readonly string[],
): Promise<void> {
  try {
    await sendAll(from, from.env.EVENTS_QUEUE, packEventIds(eventIds));
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "warn",
        message: "event publish failed; the sweep will retry",
        events: eventIds.length,
        error: String(error),
      }),
    );
  }
}

/** The messages that carry `eventIds`: consecutive runs of at most `MAX_EVENTS_PER_MESSAGE` ids. */
export function packEventIds(eventIds: readonly string[]): EventMessage[] {
  const messages: EventMessage[] = [];
  for (let start = 0; start < eventIds.length; start += MAX_EVENTS_PER_MESSAGE)
    messages.push({ event_ids: eventIds.slice(start, start + MAX_EVENTS_PER_MESSAGE) });
  return messages;
}
