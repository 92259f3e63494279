import { consumeExportDeadLetters, consumeExports } from "./domains/exports/consumer";
import { consumeBulk, consumeBulkDeadLetters } from "./domains/institutions/bulk/consumer";
import {
  deadLetterDeliveries,
  deadLetterEvents,
  deliverWebhooks,
  fanOutEvents,
} from "./domains/webhooks/consumer";
import type { Env } from "./env";

export type QueueConsumer = (batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext) => Promise<void>;

/** Which consumer handles which queue of wrangler.toml (a dead-letter queue has its own). */
export const QUEUE_CONSUMERS: Record<string, QueueConsumer> = {
  "lingua-events": fanOutEvents,
  "lingua-events-dlq": deadLetterEvents,
  "lingua-webhook-deliveries": deliverWebhooks,
  "lingua-webhook-deliveries-dlq": deadLetterDeliveries,
  "lingua-exports": consumeExports,
  "lingua-exports-dlq": consumeExportDeadLetters,
  "lingua-bulk-members": consumeBulk,
  "lingua-bulk-members-dlq": consumeBulkDeadLetters,
};

export async function consumeQueue(
  batch: MessageBatch<unknown>,
  env: Env,
  ctx: ExecutionContext,
): Promise<void> {
  const consumer = QUEUE_CONSUMERS[batch.queue];
  if (!consumer) {
    // A queue wired in wrangler.toml but not here: keep the messages rather than lose them.
    console.error(JSON.stringify({ level: "error", message: "no consumer for queue", queue: batch.queue }));
    batch.retryAll();
    return;
  }
  await consumer(batch, env, ctx);
}
