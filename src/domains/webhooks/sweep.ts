import { sql } from "drizzle-orm";
import { outboxEvents } from "../../db/schema";
import { requeueLost } from "../../platform/delivery";
import {
  EVENT_RETENTION_MS,
  INTERNAL_EVENT_RETENTION_MS,
  INTERNAL_EVENTS_CONDITION,
} from "../../platform/events";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import { webhookDeliveryTarget } from "./delivery-target";

const SWEEP_LIMIT = 1_000;

/**
 * The safety net under the delivery queue: a delivery whose message was lost is queued again, about a
 * minute after its attempt's lease or its due time ran out (the delivery engine's `requeueLost`); one
 * waiting for a delayed retry is not. (Events that not every subscriber took are the dispatcher's:
 * platform/outbox-sweep.ts.)
 */
export function requeueStalledDeliveries(ctx: ServiceContext): Promise<number> {
  return requeueLost(ctx, webhookDeliveryTarget);
}

/**
 * Deleting an event cascades to its deliveries and their attempts. Events go after 30 days; internal
 * ones (never listed, never delivered) a day after every subscriber took them, through their own
 * partial index (`outbox_events_internal_idx`, whose condition this statement repeats literally).
 */
export async function purgeOldEvents(ctx: ServiceContext): Promise<number> {
  const now = ctx.now();
  const [old, internal] = await ctx.db.batch([
    ctx.db
      .delete(outboxEvents)
      .where(
        sql`${outboxEvents.id} IN (SELECT id FROM outbox_events WHERE created_at < ${nowIso(now - EVENT_RETENTION_MS)} ORDER BY created_at LIMIT ${SWEEP_LIMIT * 5})`,
      ),
    ctx.db
      .delete(outboxEvents)
      .where(
        sql`${outboxEvents.id} IN (SELECT id FROM outbox_events INDEXED BY outbox_events_internal_idx WHERE ${sql.raw(INTERNAL_EVENTS_CONDITION)} AND created_at < ${nowIso(now - INTERNAL_EVENT_RETENTION_MS)} AND dispatched_at IS NOT NULL ORDER BY created_at LIMIT ${SWEEP_LIMIT * 5})`,
      ),
  ]);
  return old.meta.changes + internal.meta.changes;
}
