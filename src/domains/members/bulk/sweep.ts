import { and } from "drizzle-orm";
import { bulkJobs } from "../../../db/schema";
import { nowIso } from "../../../platform/ids";
import { expired, takeLost } from "../../../platform/jobs/lease";
import type { ServiceContext } from "../../../platform/service/context";
import { ABANDONED, enqueueBulk, isActive, LEASE, markFailed } from "./jobs";

/** A queued upload still unfinished this long after it was uploaded is given up. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000;
const BATCH = 50;

export const TOO_SLOW =
  "The upload did not finish within 24 hours and was given up. Upload the file again (rows already applied then show as unchanged).";

/**
 * The minute cron's bulk upload sweep: every active job whose lease ran out (platform/jobs/lease.ts:
 * the invocation applying it died, or the message it awaited is past its due time and the grace) is
 * - resumed, if it was queued: taken for a new message of its current generation (conditionally, so
 *   that concurrent sweeps send one), which carries on from the checkpoint;
 * - failed, if it was applied within its request (no stored file to resume from), or if it is older
 *   than a day: its file deleted, so that the institution's next upload is accepted.
 * `ctx.now()` is the cron's scheduled time.
 */
export async function sweepBulkJobs(ctx: ServiceContext): Promise<{ resumed: number; failed: number }> {
  const { db } = ctx;
  const now = ctx.now();
  const lost = await db
    .select({
      id: bulkJobs.id,
      generation: bulkJobs.generation,
      r2Key: bulkJobs.r2Key,
      createdAt: bulkJobs.createdAt,
    })
    .from(bulkJobs)
    .where(and(isActive(), expired(LEASE, now)))
    .limit(BATCH);
  let resumed = 0;
  let failed = 0;
  for (const job of lost) {
    if (job.r2Key === null || job.createdAt < nowIso(now - GIVE_UP_AFTER_MS)) {
      const reason = job.r2Key === null ? ABANDONED : TOO_SLOW;
      if (await markFailed(ctx, { jobId: job.id, reason, unless: { generation: job.generation } })) {
        failed += 1;
        if (job.r2Key) await ctx.env.EXPORTS_BUCKET.delete(job.r2Key).catch(() => undefined);
      }
      continue;
    }
    if (!(await takeLost(ctx, LEASE, job))) continue;
    await enqueueBulk(ctx, { job_id: job.id, generation: job.generation });
    resumed += 1;
  }
  return { resumed, failed };
}
