import { and } from "drizzle-orm";
import { xapiBackfills } from "../../../db/schema";
import { nowIso } from "../../../platform/ids";
import { expired, takeLost } from "../../../platform/jobs/lease";
import type { ServiceContext } from "../../../platform/service/context";
import { enqueueBackfill, isActive, LEASE, markFailed } from "./jobs";

/** An active back-fill still unfinished this long after it was started is given up. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000;
const BATCH = 50;

export const TOO_SLOW =
  "The back-fill did not finish within 24 hours and was given up. What it queued stays queued; start a new back-fill to forward the rest.";

/**
 * The minute cron's back-fill sweep: every active back-fill whose lease ran out (the invocation
 * holding it died, or the message it awaited is past its due time and the grace) is taken for a new
 * message of its current generation — conditionally, so that concurrent sweeps send one — which
 * carries on from the checkpoint; one older than a day is failed instead, so that the endpoint can
 * be back-filled again. `ctx.now()` is the cron's scheduled time.
 */
export async function sweepBackfills(ctx: ServiceContext): Promise<{ resumed: number; failed: number }> {
  const now = ctx.now();
  const lost = await ctx.db
    .select({
      id: xapiBackfills.id,
      generation: xapiBackfills.generation,
      createdAt: xapiBackfills.createdAt,
    })
    .from(xapiBackfills)
    .where(and(isActive(), expired(LEASE, now)))
    .limit(BATCH);
  let resumed = 0;
  let failed = 0;
  for (const job of lost) {
    if (job.createdAt < nowIso(now - GIVE_UP_AFTER_MS)) {
      if (await markFailed(ctx, { jobId: job.id, reason: TOO_SLOW, generation: job.generation })) failed += 1;
      continue;
    }
    if (!(await takeLost(ctx, LEASE, job))) continue;
    await enqueueBackfill(ctx, { backfill_id: job.id, generation: job.generation });
    resumed += 1;
  }
  return { resumed, failed };
}
