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
