import { and, isNull, lt, ne, or, sql } from "drizzle-orm";
import { outboxEvents, webhookDeliveries } from "../../db/schema";
import type { Env } from "../../env";
import { database, inJsonList } from "../../platform/db";
import { EVENT_RETENTION_MS, publishEvents } from "../../platform/events";
import { nowIso } from "../../platform/ids";
import { enqueueDeliveries } from "./delivery-queue";

/** An event is re-sent when a minute passed without fan-out, then at most every five minutes. */
const UNPUBLISHED_AFTER_MS = 60_000;
const REQUEUE_EVERY_MS = 300_000;
/** A delivery this late past its due time has lost its queue message. */
const STALLED_AFTER_MS = 600_000;
const SWEEP_LIMIT = 1_000;

/**
 * The safety net under the queues: an event whose `send` failed, or a delivery whose message was
 * lost, is sent again. Both consumers are idempotent, so a resend that was not needed is harmless.
 */
export async function requeueUnpublishedEvents(env: Env, now: number): Promise<number> {
  const db = database(env.DB);
  const due = await db
    .select({ id: outboxEvents.id })
    .from(outboxEvents)
    .where(
      and(
        isNull(outboxEvents.fannedOutAt),
        lt(outboxEvents.createdAt, nowIso(now - UNPUBLISHED_AFTER_MS)),
        or(isNull(outboxEvents.requeuedAt), lt(outboxEvents.requeuedAt, now - REQUEUE_EVERY_MS)),
        ne(outboxEvents.type, "ping"),
      ),
    )
    .orderBy(outboxEvents.createdAt)
    .limit(SWEEP_LIMIT);
  if (due.length === 0) return 0;
  const ids = due.map((e) => e.id);
  await db.update(outboxEvents).set({ requeuedAt: now }).where(inJsonList(outboxEvents.id, ids));
  await publishEvents(env, ids);
  return ids.length;
}

export async function requeueStalledDeliveries(env: Env, now: number): Promise<number> {
  const db = database(env.DB);
  const stalled = await db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: now })
    .where(
      sql`${webhookDeliveries.id} IN (SELECT id FROM webhook_deliveries WHERE status IN ('pending', 'retrying') AND next_attempt_at < ${now - STALLED_AFTER_MS} AND (claimed_until IS NULL OR claimed_until < ${now}) LIMIT ${SWEEP_LIMIT})`,
    )
    .returning({ id: webhookDeliveries.id });
  await enqueueDeliveries(
    env,
    stalled.map((d) => d.id),
  );
  return stalled.length;
}

/** Deleting an event cascades to its deliveries and their attempts. */
export async function purgeOldEvents(env: Env, now: number): Promise<number> {
  const result = await database(env.DB)
    .delete(outboxEvents)
    .where(
      sql`${outboxEvents.id} IN (SELECT id FROM outbox_events WHERE created_at < ${nowIso(now - EVENT_RETENTION_MS)} ORDER BY created_at LIMIT ${SWEEP_LIMIT * 5})`,
    )
    .run();
  return result.meta.changes;
}
