import { sql } from "drizzle-orm";
import { ltiPassbacks } from "../../../db/schema";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { enqueuePassbacks } from "./passback-target";

/** A passback this late past its due time (or unclaimed this long) has lost its queue message. */
const STALLED_AFTER_MS = 600_000;
const SWEEP_LIMIT = 1_000;

/**
 * The minute cron's safety net under the passback queue: a passback whose message was lost is queued
 * again (the consumer's claim makes a resend that was not needed harmless). Returns how many.
 */
export async function requeueStalledPassbacks(ctx: ServiceContext): Promise<number> {
  const now = ctx.now();
  const stalled = await ctx.db
    .update(ltiPassbacks)
    .set({ nextAttemptAt: now })
    .where(
      sql`${ltiPassbacks.id} IN (SELECT id FROM lti_passbacks WHERE status IN ('pending', 'retrying')
        AND coalesce(next_attempt_at, 0) < ${now - STALLED_AFTER_MS}
        AND (claimed_until IS NULL OR claimed_until < ${now})
        AND created_at < ${nowIso(now - STALLED_AFTER_MS)} LIMIT ${SWEEP_LIMIT})`,
    )
    .returning({ id: ltiPassbacks.id });
  if (stalled.length > 0)
    await enqueuePassbacks(
      ctx,
      stalled.map((p) => p.id),
    );
  return stalled.length;
}
