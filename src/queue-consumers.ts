import { consumeExportDeadLetters, consumeExports } from "./domains/exports/consumer";
import { deadLetterPassbacks, deliverPassbacks } from "./domains/lti/consumer";
import { passbackCompletions } from "./domains/lti/subscriber";
import { consumeBulk, consumeBulkDeadLetters } from "./domains/members/bulk/consumer";
import { deadLetterDeliveries, deadLetterEvents, deliverWebhooks } from "./domains/webhooks/consumer";
import { fanOut } from "./domains/webhooks/fan-out";
import type { Env } from "./env";
import { outboxDispatcher } from "./platform/outbox-dispatch";
import { backgroundContext, type ServiceContext } from "./platform/service/context";

/** A queue's consumer: the batch, and the invocation's service context (built once, here). */
export type QueueConsumer = (batch: MessageBatch<unknown>, ctx: ServiceContext) => Promise<void>;

type EnvConsumer = (batch: MessageBatch<unknown>, env: Env, execution: ExecutionContext) => Promise<void>;
/** Migration shim: a consumer not yet on the service context. Goes when the last one has moved. */
const legacy =
  (consume: EnvConsumer): QueueConsumer =>
  (batch, ctx) =>
    consume(batch, ctx.env, {
      waitUntil: ctx.waitUntil,
      passThroughOnException: () => undefined,
    } as unknown as ExecutionContext);
type EnvSubscriber = (env: Env, eventIds: string[]) => Promise<void>;
const legacySubscriber =
  (deliver: EnvSubscriber) =>
  (ctx: ServiceContext, eventIds: string[]): Promise<void> =>
    deliver(ctx.env, eventIds);

/** Which consumer handles which queue of wrangler.toml (a dead-letter queue has its own). */
export const QUEUE_CONSUMERS: Record<string, QueueConsumer> = {
  // Every outbox event goes to each subscriber, which queues its own deliveries.
  "lingua-events": outboxDispatcher([
    { name: "webhooks", deliver: legacySubscriber(fanOut) },
    { name: "lti-passback", deliver: legacySubscriber(passbackCompletions) },
  ]),
  "lingua-events-dlq": legacy(deadLetterEvents),
  "lingua-webhook-deliveries": legacy(deliverWebhooks),
  "lingua-webhook-deliveries-dlq": legacy(deadLetterDeliveries),
  "lingua-exports": legacy(consumeExports),
  "lingua-exports-dlq": legacy(consumeExportDeadLetters),
  "lingua-bulk-members": consumeBulk,
  "lingua-bulk-members-dlq": consumeBulkDeadLetters,
  "lingua-lti-passbacks": legacy(deliverPassbacks),
  "lingua-lti-passbacks-dlq": legacy(deadLetterPassbacks),
};

export async function consumeQueue(
  batch: MessageBatch<unknown>,
  env: Env,
  execution: ExecutionContext,
): Promise<void> {
  const consumer = QUEUE_CONSUMERS[batch.queue];
  if (!consumer) {
    // A queue wired in wrangler.toml but not here: keep the messages rather than lose them.
    console.error(JSON.stringify({ level: "error", message: "no consumer for queue", queue: batch.queue }));
    batch.retryAll();
    return;
  }
  await consumer(batch, backgroundContext(env, execution, "queue"));
}
