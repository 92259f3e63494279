import { deadLetterBatch, deliverBatch, parseBatch } from "../../platform/delivery";
import { EventMessage } from "../../platform/events";
import type { ServiceContext } from "../../platform/service/context";
import { webhookDeliveryTarget } from "./delivery-target";

/**
 * The webhook pipeline's queue consumers, each `(batch, ctx)` on the invocation's service context.
 * Each parses its messages first: a body that does not match its schema is logged and dead-lettered,
 * never retried into a crash loop.
 */

/**
 * Events that still fail after the queue's retries (the outbox dispatcher, platform/outbox-dispatch.ts,
 * consumes the events queue itself): logged; the sweep sends them again later.
 */
export async function deadLetterEvents(batch: MessageBatch<unknown>, _ctx: ServiceContext): Promise<void> {
  const parsed = await parseBatch(batch, EventMessage);
  console.error(
    JSON.stringify({
      level: "error",
      message: "event fan-out dead-lettered",
      count: parsed.length,
      events: parsed.reduce((n, p) => n + p.body.event_ids.length, 0),
      sample: parsed.flatMap((p) => p.body.event_ids).slice(0, 5),
    }),
  );
  for (const { message } of parsed) message.ack();
}

/** The delivery queue: each delivery claimed, sent once and recorded by the delivery engine. */
export function deliverWebhooks(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  return deliverBatch(ctx, webhookDeliveryTarget, batch);
}

/** Deliveries whose messages exhausted the queue's own retries: closed as failed, visibly. */
export function deadLetterDeliveries(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  return deadLetterBatch(ctx, webhookDeliveryTarget, batch);
}
