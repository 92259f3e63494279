import { sql } from "drizzle-orm";
import { outboxEvents, webhookDeliveries } from "../../db/schema";
import { EVENT_RETENTION_MS } from "../../platform/events";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import { enqueueDeliveries } from "./delivery-target";

/** A delivery this late past its due time has lost its queue message. */
const STALLED_AFTER_MS = 600_000;
const SWEEP_LIMIT = 1_000;

/**
 * The safety net under the delivery queue: a delivery whose message was lost is queued again. The
 * consumer claims a delivery before sending, so a resend that was not needed is harmless. (Events
 * that not every subscriber took are the dispatcher's: platform/outbox-sweep.ts.)
 */
export async function requeueStalledDeliveries(ctx: ServiceContext): Promise<number> {
  const now = ctx.now();
  const stalled = await ctx.db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: now })
    .where(
      sql`${webhookDeliveries.id} IN (SELECT id FROM webhook_deliveries WHERE status IN ('pending', 'retrying') AND next_attempt_at < ${now - STALLED_AFTER_MS} AND (claimed_until IS NULL OR claimed_until < ${now}) LIMIT ${SWEEP_LIMIT})`,
    )
    .returning({ id: webhookDeliveries.id });
  await enqueueDeliveries(
    ctx,
    stalled.map((d) => d.id),
  );
  return stalled.length;
}

/** Deleting an event cascades to its deliveries and their attempts. */
export async function purgeOldEvents(ctx: ServiceContext): Promise<number> {
  const now = ctx.now();
  const result = await ctx.db
    .delete(outboxEvents)
    .where(
      sql`${outboxEvents.id} IN (SELECT id FROM outbox_events WHERE created_at < ${nowIso(now - EVENT_RETENTION_MS)} ORDER BY created_at LIMIT ${SWEEP_LIMIT * 5})`,
    )
    .run();
  return result.meta.changes;
}
