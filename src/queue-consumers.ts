import { consumeExportDeadLetters, consumeExports } from "./domains/exports/consumer";
import { passbackCompletions } from "./domains/lti/grades/completion-subscriber";
import { deadLetterPassbacks, deliverPassbacks } from "./domains/lti/grades/queue-consumer";
import { consumeRosterSyncs, deadLetterRosterSyncs } from "./domains/lti/roster/consumer";
import { consumeBulk, consumeBulkDeadLetters } from "./domains/members/bulk/consumer";
import { deadLetterDeliveries, deadLetterEvents, deliverWebhooks } from "./domains/webhooks/consumer";
import { fanOut } from "./domains/webhooks/fan-out";
import { consumeBackfillDeadLetters, consumeBackfills } from "./domains/xapi/backfill/consumer";
import { deadLetterXapiBatches, deliverXapiBatches } from "./domains/xapi/delivery/consumer";
import { forwardEvents } from "./domains/xapi/delivery/subscriber";
import type { Env } from "./env";
import { consumeMoveDeadLetters, consumeMoves } from "./platform/move/consumer";
import { outboxDispatcher } from "./platform/outbox-dispatch";
import { databaseOfMessage } from "./platform/queue";
import { backgroundContext, type ServiceContext } from "./platform/service/context";
import { type DatabaseBinding, databaseBindings } from "./platform/service/databases";

/** A queue's consumer: the batch, and the invocation's service context (built once, here). */
export type QueueConsumer = (batch: MessageBatch<unknown>, ctx: ServiceContext) => Promise<void>;

/** Which consumer handles which queue of wrangler.toml (a dead-letter queue has its own). */
export const QUEUE_CONSUMERS: Record<string, QueueConsumer> = {
  // Every outbox event goes to each subscriber, which queues its own deliveries.
  "lingua-events": outboxDispatcher([
    { name: "webhooks", deliver: fanOut },
    { name: "lti-passback", deliver: passbackCompletions },
    { name: "xapi", deliver: forwardEvents },
  ]),
  "lingua-events-dlq": deadLetterEvents,
  "lingua-webhook-deliveries": deliverWebhooks,
  "lingua-webhook-deliveries-dlq": deadLetterDeliveries,
  "lingua-exports": consumeExports,
  "lingua-exports-dlq": consumeExportDeadLetters,
  "lingua-bulk-members": consumeBulk,
  "lingua-bulk-members-dlq": consumeBulkDeadLetters,
  "lingua-lti-passbacks": deliverPassbacks,
  "lingua-lti-passbacks-dlq": deadLetterPassbacks,
  "lingua-xapi-statements": deliverXapiBatches,
  "lingua-xapi-statements-dlq": deadLetterXapiBatches,
  "lingua-lti-roster": consumeRosterSyncs,
  "lingua-lti-roster-dlq": deadLetterRosterSyncs,
  "lingua-xapi-backfills": consumeBackfills,
  "lingua-xapi-backfills-dlq": consumeBackfillDeadLetters,
  "lingua-institution-moves": consumeMoves,
  "lingua-institution-moves-dlq": consumeMoveDeadLetters,
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
  // Each message runs in the database it was sent from (platform/queue.ts); a batch of one database,
  // the usual case, is handed over whole.
  const groups = new Map<string, Message<unknown>[]>();
  for (const message of batch.messages) {
    const name = databaseOfMessage(message.body);
    groups.set(name, [...(groups.get(name) ?? []), message]);
  }
  const known = databaseBindings(env) as string[];
  await Promise.all(
    [...groups].map(async ([name, messages]) => {
      if (!known.includes(name)) {
        // A database this deployment no longer binds: keep the messages rather than lose them.
        console.error(
          JSON.stringify({
            level: "error",
            message: "message of an unknown database",
            queue: batch.queue,
            database: name,
          }),
        );
        for (const message of messages) message.retry();
        return;
      }
      const part = groups.size === 1 ? batch : subBatch(batch, messages);
      await consumer(part, backgroundContext(env, execution, "queue", undefined, name as DatabaseBinding));
    }),
  );
}

/** The messages of one database, as a batch of their own (acknowledging or retrying only them). */
function subBatch(
  batch: MessageBatch<unknown>,
  messages: readonly Message<unknown>[],
): MessageBatch<unknown> {
  return {
    queue: batch.queue,
    metadata: batch.metadata,
    messages,
    ackAll: () => {
      for (const message of messages) message.ack();
    },
    retryAll: (options) => {
      for (const message of messages) message.retry(options);
    },
  };
}
