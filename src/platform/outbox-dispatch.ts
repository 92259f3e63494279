import type { Env } from "../env";
import type { EventMessage } from "./events";

/**
 * One way for an event to leave the outbox: the events queue's consumer hands every event to each
 * subscribing domain (webhooks, LTI passback, later xAPI). A subscriber turns events into work on
 * its own delivery queue and is idempotent per (event, subscriber) — its rows carry a unique
 * (event, target) index — so handing it the same event twice does nothing the second time.
 */
export interface OutboxSubscriber {
  name: string;
  deliver(env: Env, eventIds: string[]): Promise<void>;
}

/**
 * A consumer of the events queue over `subscribers`. All of them get every event of the batch; when
 * any fails, the whole batch is retried (the others do nothing again) and the failure is logged.
 */
export function outboxDispatcher(subscribers: readonly OutboxSubscriber[]) {
  return async function dispatchEvents(batch: MessageBatch<unknown>, env: Env): Promise<void> {
    const ids = new Set<string>();
    for (const message of batch.messages) {
      const id = (message.body as Partial<EventMessage> | null)?.event_id;
      if (typeof id === "string") ids.add(id);
      else
        console.error(
          JSON.stringify({ level: "error", message: "malformed event message dropped", id: message.id }),
        );
    }
    if (ids.size === 0) {
      batch.ackAll();
      return;
    }
    const eventIds = [...ids];
    const results = await Promise.allSettled(subscribers.map((s) => s.deliver(env, eventIds)));
    const failed = results.flatMap((r, i) =>
      r.status === "rejected" ? [{ name: subscribers[i]?.name, error: String(r.reason) }] : [],
    );
    if (failed.length === 0) {
      batch.ackAll();
      return;
    }
    console.error(
      JSON.stringify({
        level: "error",
        message: "event dispatch failed; retrying",
        events: eventIds.length,
        failed,
      }),
    );
    batch.retryAll();
  };
}
