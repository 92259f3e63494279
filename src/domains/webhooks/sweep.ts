import { sql } from "drizzle-orm";
import { outboxEvents } from "../../db/schema";
import { requeueLost } from "../../platform/delivery";
import { EVENT_RETENTION_MS } from "../../platform/events";
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
