import { sql } from "drizzle-orm";
import { outboxEvents, webhookDeliveries } from "../../db/schema";
import type { Env } from "../../env";
import { database } from "../../platform/db";
import { EVENT_RETENTION_MS } from "../../platform/events";
import { nowIso } from "../../platform/ids";
import { enqueueDeliveries } from "./delivery-target";

/** A delivery this late past its due time has lost its queue message. */
const STALLED_AFTER_MS = 600_000;
const SWEEP_LIMIT = 1_000;

/**
 * The safety net under the delivery queue: a delivery whose message was lost is queued again. The
 * consumer claims a delivery before sending, so a resend that was not needed is harmless. (Events
 * that not every subscriber took are the dispatcher's: platform/outbox-sweep.ts.)
 */
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
