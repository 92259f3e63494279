import { chunk } from "./batch";

/** Queues accepts at most 100 messages per `sendBatch`. */
const MAX_BATCH_MESSAGES = 100;

/** Sends every body as its own JSON message, in as few `sendBatch` calls as Queues allows. */
export async function sendAll<Body>(queue: Queue<Body>, bodies: readonly Body[]): Promise<void> {
  for (const part of chunk([...bodies], MAX_BATCH_MESSAGES)) {
    await queue.sendBatch(part.map((body) => ({ body, contentType: "json" as const })));
  }
}
