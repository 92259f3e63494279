import { z } from "zod";

/** Queues refuses a longer delay than 12 hours. */
export const MAX_QUEUE_DELAY_SECONDS = 43_200;

/** A delay as Queues takes it: whole seconds, at least `min`, at most 12 hours. */
export function queueDelaySeconds(seconds: number, min = 0): number {
  return Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(min, Math.ceil(seconds)));
}

/** Queues accepts at most 100 messages per `sendBatch`. */
const MAX_BATCH_MESSAGES = 100;

/**
 * Sends every body as its own JSON message, in as few `sendBatch` calls as Queues allows;
 * `delaySeconds[i]`, when given, delays the i-th message.
 */
export async function sendAll<Body>(
  queue: Queue<Body>,
  bodies: readonly Body[],
  delaySeconds?: readonly number[],
): Promise<void> {
  for (let start = 0; start < bodies.length; start += MAX_BATCH_MESSAGES) {
    const part = bodies.slice(start, start + MAX_BATCH_MESSAGES);
    await queue.sendBatch(
      part.map((body, i) => {
        const delay = delaySeconds?.[start + i];
        return delay
          ? { body, contentType: "json" as const, delaySeconds: delay }
          : { body, contentType: "json" as const };
      }),
    );
  }
}

/** A message whose body passed its consumer's schema. */
export interface ParsedMessage<Body> {
  message: Message<unknown>;
  body: Body;
}

/**
 * The messages of a batch whose bodies parse with `schema`. A message that does not is logged with
 * the reason and dead-lettered at once — sent as it is to `deadLetter` and acknowledged — since a body
 * that fails today fails on every retry. A dead-letter queue's own consumer passes `null`: there the
 * message is logged and acknowledged, the end of its road.
 */
export async function parseMessages<Body>(
  batch: MessageBatch<unknown>,
  schema: z.ZodType<Body>,
  deadLetter: Queue<unknown> | null,
): Promise<ParsedMessage<Body>[]> {
  const parsed: ParsedMessage<Body>[] = [];
  const rejected: Message<unknown>[] = [];
  for (const message of batch.messages) {
    const result = schema.safeParse(message.body);
    if (result.success) {
      parsed.push({ message, body: result.data });
      continue;
    }
    console.error(
      JSON.stringify({
        level: "error",
        message: "malformed queue message dead-lettered",
        queue: batch.queue,
        id: message.id,
        reason: z.prettifyError(result.error),
      }),
    );
    rejected.push(message);
  }
  if (deadLetter && rejected.length > 0)
    await sendAll(
      deadLetter,
      rejected.map((m) => m.body),
    );
  for (const message of rejected) message.ack();
  return parsed;
}
