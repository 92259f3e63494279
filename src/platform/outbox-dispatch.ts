import { and, isNull } from "drizzle-orm";
import { outboxEvents } from "../db/schema";
import { type Database, inJsonList } from "./db";
import { EventMessage } from "./events";
import { nowIso } from "./ids";
import { parseMessage } from "./queue";
import type { ServiceContext } from "./service/context";

/**
 * One way for an event to leave the outbox: the events queue's consumer hands every event to each
 * subscribing domain (webhooks, LTI passback, later xAPI). A subscriber turns events into work on
 * its own delivery queue and is idempotent per (event, subscriber) — its rows carry a unique
 * (event, target) index — so handing it the same event twice does nothing the second time.
 */
export interface OutboxSubscriber {
  name: string;
  deliver(ctx: ServiceContext, eventIds: string[]): Promise<void>;
}

/**
 * A consumer of the events queue over `subscribers`. All of them get every event of the batch (every
 * id of every message, in one call each). When all succeed, the events are marked dispatched and the
 * messages acknowledged; when any fails, nothing is marked, the batch's messages are retried (the
 * others do nothing again) and the failure is logged. An event left unmarked — also one whose
 * messages ran out of retries — is sent again by the sweep (outbox-sweep.ts), so each subscriber
 * gets every event at least once.
 */
export function outboxDispatcher(subscribers: readonly OutboxSubscriber[]) {
  return async function dispatchEvents(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
    // A body that does not fit is dead-lettered at once (and acknowledged), never retried.
    const parsed: { message: Message<unknown>; eventIds: string[] }[] = [];
    for (const message of batch.messages) {
      const body = await parseMessage(EventMessage, message, {
        queue: batch.queue,
        deadLetter: ctx.env.EVENTS_DLQ,
      });
      if (body) parsed.push({ message, eventIds: body.event_ids });
    }
    if (parsed.length === 0) return;
    // A message carries up to MAX_EVENTS_PER_MESSAGE ids; the same id in two messages (a re-publish by
    // the sweep, a redelivery) is handed over once.
    const eventIds = [...new Set(parsed.flatMap((p) => p.eventIds))];
    const results = await Promise.allSettled(subscribers.map((s) => s.deliver(ctx, eventIds)));
    const failed = results.flatMap((r, i) =>
      r.status === "rejected" ? [{ name: subscribers[i]?.name, error: String(r.reason) }] : [],
    );
    if (failed.length === 0) {
      try {
        await markDispatched(ctx.db, eventIds, ctx.now());
      } catch (error) {
        // Retrying repeats only idempotent work; acknowledging would leave the sweep to send it again.
        failed.push({ name: "dispatched-marker", error: String(error) });
      }
    }
    if (failed.length > 0)
      console.error(
        JSON.stringify({
          level: "error",
          message: "event dispatch failed; retrying",
          events: eventIds.length,
          failed,
        }),
      );
    for (const { message } of parsed) failed.length > 0 ? message.retry() : message.ack();
  };
}

/**
 * Every subscriber has these events: one statement for the whole batch (up to 100 ids as one JSON
 * parameter). An id marked before (a redelivery) keeps its first time.
 */
async function markDispatched(db: Database, eventIds: string[], now: number): Promise<void> {
  await db
    .update(outboxEvents)
    .set({ dispatchedAt: nowIso(now) })
    .where(and(inJsonList(outboxEvents.id, eventIds), isNull(outboxEvents.dispatchedAt)));
}
