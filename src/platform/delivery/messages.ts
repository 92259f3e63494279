import type { z } from "zod";
import { parseMessage } from "../queue";

/** A message whose body fits its consumer's schema. */
export interface ParsedMessage<Body> {
  message: Message<unknown>;
  body: Body;
}

/**
 * The messages of a batch whose bodies fit `schema`; each one that does not is logged, sent on to
 * `deadLetter` and acknowledged by platform/queue's parseMessage (a dead-letter queue's own consumer
 * passes none: there it is logged and acknowledged).
 */
export async function parseBatch<Schema extends z.ZodType>(
  batch: MessageBatch<unknown>,
  schema: Schema,
  deadLetter?: Queue<unknown>,
): Promise<ParsedMessage<z.infer<Schema>>[]> {
  const origin = deadLetter ? { queue: batch.queue, deadLetter } : { queue: batch.queue };
  const parsed: ParsedMessage<z.infer<Schema>>[] = [];
  for (const message of batch.messages) {
    const body = await parseMessage(schema, message, origin);
    if (body !== null) parsed.push({ message, body });
  }
  return parsed;
}

/** The parsed messages of a batch by the id they carry: a twin message lands beside its original. */
export function groupById<Body>(
  parsed: ParsedMessage<Body>[],
  key: (body: Body) => string,
): Map<string, Message<unknown>[]> {
  const byId = new Map<string, Message<unknown>[]>();
  for (const { message, body } of parsed) {
    const id = key(body);
    byId.set(id, [...(byId.get(id) ?? []), message]);
  }
  return byId;
}
