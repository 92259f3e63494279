import { and, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { z } from "zod";
import { ltiConsumers, ltiLaunches, ltiPassbacks } from "../../db/schema";
import type { Env } from "../../env";
import { database, inJsonList } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import { parseMessage, queueDelaySeconds } from "../../platform/queue";
import { attemptPassback } from "./passback-send";
import { CLAIM_MS, recordResult } from "./passbacks";

/** Queues may hand a message over a little before its delay is up. */
const EARLY_SLACK_MS = 2_000;

const PassbackMessageSchema = z.object({ passback_id: z.string().min(1) });

/** The batch's messages by passback; a body that does not fit goes to the dead-letter queue at once. */
async function idsOf(batch: MessageBatch<unknown>, env: Env): Promise<Map<string, Message<unknown>[]>> {
  const byId = new Map<string, Message<unknown>[]>();
  for (const message of batch.messages) {
    const body = await parseMessage(PassbackMessageSchema, message, {
      queue: batch.queue,
      deadLetter: env.LTI_PASSBACK_DLQ,
    });
    if (body) byId.set(body.passback_id, [...(byId.get(body.passback_id) ?? []), message]);
  }
  return byId;
}

/** Claims an open, due passback and counts its attempt; null when it is done, claimed or not due. */
async function claim(env: Env, id: string, now: number) {
  const db = database(env.DB);
  const [row] = await db
    .update(ltiPassbacks)
    .set({ claimedUntil: now + CLAIM_MS, attemptCount: sql`${ltiPassbacks.attemptCount} + 1` })
    .where(
      and(
        eq(ltiPassbacks.id, id),
        inArray(ltiPassbacks.status, ["pending", "retrying"]),
        or(isNull(ltiPassbacks.claimedUntil), lt(ltiPassbacks.claimedUntil, now)),
        or(isNull(ltiPassbacks.nextAttemptAt), lte(ltiPassbacks.nextAttemptAt, now + EARLY_SLACK_MS)),
      ),
    )
    .returning();
  return row ?? null;
}

/** When a message that found its passback claimed or not yet due should come back (null: done, acknowledge). */
async function laterDelay(env: Env, id: string, now: number): Promise<number | null> {
  const row = await database(env.DB).select().from(ltiPassbacks).where(eq(ltiPassbacks.id, id)).get();
  if (!row || row.status === "succeeded" || row.status === "failed") return null;
  const until = Math.max(row.claimedUntil ?? 0, row.nextAttemptAt ?? 0);
  return queueDelaySeconds((until - now) / 1000, 1);
}

async function deliverOne(env: Env, id: string, messages: Message<unknown>[]): Promise<void> {
  const now = Date.now();
  const row = await claim(env, id, now);
  if (!row) {
    const delay = await laterDelay(env, id, now);
    for (const m of messages) delay === null ? m.ack() : m.retry({ delaySeconds: delay });
    return;
  }
  const db = database(env.DB);
  const found = await db
    .select({ launch: ltiLaunches, consumer: ltiConsumers })
    .from(ltiLaunches)
    .leftJoin(ltiConsumers, eq(ltiConsumers.id, ltiLaunches.consumerId))
    .where(eq(ltiLaunches.id, row.launchId))
    .get();
  if (!found?.consumer) {
    await db
      .update(ltiPassbacks)
      .set({
        status: "failed",
        claimedUntil: null,
        lastError: "The platform registration was deleted; not sent",
        completedAt: nowIso(),
      })
      .where(eq(ltiPassbacks.id, id));
    for (const m of messages) m.ack();
    return;
  }
  const result = await attemptPassback(env, row, found.launch, found.consumer);
  // The retry is a new message with its delay (recordResult sends it); this one is done.
  await recordResult(env, row, result);
  for (const m of messages) m.ack();
}

/**
 * The passback queue: each message sends its passback once (claimed first, so a twin message does
 * not send it again), records the attempt, and schedules a retry as a delayed message.
 */
export async function deliverPassbacks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byId = await idsOf(batch, env);
  const entries = [...byId.entries()];
  // Six at a time: Workers keep at most six connections open per invocation.
  for (let i = 0; i < entries.length; i += 6) {
    await Promise.all(
      entries.slice(i, i + 6).map(([id, messages]) =>
        deliverOne(env, id, messages).catch((error) => {
          console.error(
            JSON.stringify({ level: "error", message: "passback delivery failed", id, error: String(error) }),
          );
          for (const m of messages) m.retry({ delaySeconds: 30 });
        }),
      ),
    );
  }
}

/** Passbacks whose messages the queue gave up on: closed as failed, visibly. */
export async function deadLetterPassbacks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const ids = batch.messages.flatMap((m) => {
    const parsed = PassbackMessageSchema.safeParse(m.body);
    return parsed.success ? [parsed.data.passback_id] : [];
  });
  if (ids.length > 0)
    await database(env.DB)
      .update(ltiPassbacks)
      .set({
        status: "failed",
        claimedUntil: null,
        lastError: "Dead-lettered: the passback queue gave up on this message",
        completedAt: nowIso(),
      })
      .where(and(inJsonList(ltiPassbacks.id, ids), inArray(ltiPassbacks.status, ["pending", "retrying"])));
  batch.ackAll();
}
