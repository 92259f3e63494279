import { and, eq, lt } from "drizzle-orm";
import { exportJobs } from "../../db/schema";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import { enqueueGeneration, failUnheldJob } from "./consumer";
import { isActive, leaseFree } from "./jobs";

/** An active job nobody has touched for this long lost its queue message: send it a new one. */
export const STALE_AFTER_MS = 15 * 60_000;
/** An active job this old is given up. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000;
const BATCH = 50;

export const TOO_SLOW =
  "The export did not finish within 24 hours and was given up. Request it again, narrower if you can.";

/**
 * The minute cron's export sweep:
 * - completed files past their retention: the R2 object is deleted, the job becomes `expired`;
 * - active jobs older than a day: failed, their upload aborted and their file deleted;
 * - active jobs without a lease and without a sign of life for 15 minutes (their message was lost:
 *   a failed send, a dead-letter drop): a new message of their current generation.
 * `ctx.now()` is the cron's scheduled time.
 */
export async function sweepExports(
  ctx: ServiceContext,
): Promise<{ expired: number; givenUp: number; requeued: number }> {
  const { db } = ctx;
  const now = ctx.now();
  let expired = 0;
  const due = await db
    .select({ id: exportJobs.id, r2Key: exportJobs.r2Key })
    .from(exportJobs)
    .where(and(eq(exportJobs.status, "completed"), lt(exportJobs.expiresAt, nowIso(now))))
    .limit(BATCH);
  if (due.length > 0) {
    await ctx.env.EXPORTS_BUCKET.delete(due.map((job) => job.r2Key));
    for (const job of due) {
      const result = await db
        .update(exportJobs)
        .set({ status: "expired", heartbeatAt: now })
        .where(and(eq(exportJobs.id, job.id), eq(exportJobs.status, "completed")))
        .run();
      expired += result.meta.changes;
    }
  }

  let givenUp = 0;
  const old = await db
    .select()
    .from(exportJobs)
    .where(and(isActive(), lt(exportJobs.createdAt, nowIso(now - GIVE_UP_AFTER_MS))))
    .limit(BATCH);
  for (const job of old) {
    try {
      if (await failUnheldJob(ctx, { job, reason: TOO_SLOW })) givenUp += 1;
    } catch (error) {
      // Still active: the next minute's sweep tries again.
      console.error(
        JSON.stringify({
          level: "warn",
          message: "could not give up an export",
          export_id: job.id,
          error: String(error),
        }),
      );
    }
  }

  let requeued = 0;
  const stale = await db
    .select()
    .from(exportJobs)
    .where(and(isActive(), leaseFree(now), lt(exportJobs.heartbeatAt, now - STALE_AFTER_MS)))
    .limit(BATCH);
  for (const job of stale) {
    // The heartbeat moves first (conditionally), so that two sweeps never both re-send.
    const claimed = await db
      .update(exportJobs)
      .set({ heartbeatAt: now })
      .where(
        and(
          eq(exportJobs.id, job.id),
          eq(exportJobs.heartbeatAt, job.heartbeatAt),
          eq(exportJobs.generation, job.generation),
        ),
      )
      .run();
    if (claimed.meta.changes === 0) continue;
    await enqueueGeneration(ctx, { job_id: job.id, generation: job.generation });
    requeued += 1;
  }
  return { expired, givenUp, requeued };
}
