import type { z } from "zod";
import type { DatabaseBinding } from "./service/databases";

/**
 * What a message carries besides its body: the database of the invocation that sent it, when that is
 * not `DB` (design/multi-database.md). The queue's consumer runs in that database
 * (`consumeQueue`, src/queue-consumers.ts); a message of `DB` is exactly its body.
 */
export interface SentFrom {
  readonly database: DatabaseBinding;
}

/** The message's database: the `database` it was sent with, or `DB`. */
export function databaseOfMessage(body: unknown): string {
  const named =
    typeof body === "object" && body !== null ? (body as { database?: unknown }).database : undefined;
  return typeof named === "string" ? named : "DB";
}

function placed<Body>(from: SentFrom, body: Body): Body {
  return from.database === "DB" ? body : { ...body, database: from.database };
}

/** Sends one JSON message (`sendAll` for many). */
export async function sendMessage<Body>(
  from: SentFrom,
  queue: Queue<Body>,
  body: Body,
  delaySeconds?: number,
): Promise<void> {
  await queue.send(
    placed(from, body),
    delaySeconds ? { contentType: "json", delaySeconds } : { contentType: "json" },
  );
}

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
  from: SentFrom,
  queue: Queue<Body>,
  bodies: readonly Body[],
  delaySeconds?: readonly number[],
): Promise<void> {
  for (let start = 0; start < bodies.length; start += MAX_BATCH_MESSAGES) {
    const part = bodies.slice(start, start + MAX_BATCH_MESSAGES);
    await queue.sendBatch(
      part.map((body, i) => {
        const delay = delaySeconds?.[start + i];
        const sent = placed(from, body);
        return delay
          ? { body: sent, contentType: "json" as const, delaySeconds: delay }
          : { body: sent, contentType: "json" as const };
      }),
    );
  }
}

/** Where a message that does not fit its schema goes, and what to call its queue in the log. */
export interface MessageOrigin {
  /** The queue's name, for the log (e.g. `lingua-exports`). */
  queue: string;
  /**
   * The producer binding of the queue's dead-letter queue. Left out by a dead-letter queue's own
   * consumer: there a message that does not fit is at the end of the line, logged and acknowledged.
   */
  deadLetter?: Queue<unknown>;
}

/**
 * A queue message's body parsed with `schema`, or null when it does not fit. Such a message can never
 * succeed, so it is not retried: it is logged with the reason, sent on to the dead-letter queue as it
 * came, and acknowledged — no crash, no retry loop. Should the dead-letter send fail, the message is
 * retried instead, and once the queue's retries are spent the platform dead-letters it itself.
 *
 *   const body = await parseMessage(ExportMessageSchema, message, { queue: "lingua-exports", deadLetter: env.EXPORTS_DLQ });
 *   if (!body) continue; // already logged, dead-lettered and acknowledged
 */
export async function parseMessage<Schema extends z.ZodType>(
  schema: Schema,
  message: Message<unknown>,
  origin: MessageOrigin,
): Promise<z.infer<Schema> | null> {
  const parsed = schema.safeParse(message.body);
  if (parsed.success) return parsed.data;
  const reason = parsed.error.issues
    .map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`)
    .join("; ");
  const fields = { queue: origin.queue, message_id: message.id, attempts: message.attempts, reason };
  if (!origin.deadLetter) {
    logQueue("error", "dead letter does not fit its schema; dropped", fields);
    message.ack();
    return null;
  }
  try {
    await origin.deadLetter.send(message.body, { contentType: "v8" });
  } catch (error) {
    logQueue("error", "message does not fit its schema; dead-lettering failed, retrying", {
      ...fields,
      error: String(error),
    });
    message.retry();
    return null;
  }
  logQueue("error", "message does not fit its schema; dead-lettered", fields);
  message.ack();
  return null;
}

function logQueue(level: "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}
