import { and, eq, lt } from "drizzle-orm";
import { exportJobs } from "../../db/schema";
import { nowIso } from "../../platform/ids";
import { expired as leaseExpired, takeLost } from "../../platform/jobs/lease";
import type { ServiceContext } from "../../platform/service/context";
import { enqueueGeneration, failUnheldJob } from "./consumer";
import { isActive, LEASE } from "./jobs";

/** An active job this old is given up. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000;
const BATCH = 50;

export const TOO_SLOW =
  "The export did not finish within 24 hours and was given up. Request it again, narrower if you can.";

/**
 * The minute cron's export sweep:
 * - completed files past their retention: the R2 object is deleted, the job becomes `expired`;
 * - active jobs older than a day: failed, their upload aborted and their file deleted;
 * - active jobs whose lease ran out (platform/jobs/lease.ts: the invocation holding it died, or the
 *   message it awaited is past its due time and the grace: a failed send, a crash before the
 *   hand-over's message, a message the queue lost): a new message of their current generation, which
 *   carries on from the checkpoint. Within about two minutes of the loss.
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
  const lost = await db
    .select({ id: exportJobs.id, generation: exportJobs.generation })
    .from(exportJobs)
    .where(and(isActive(), leaseExpired(LEASE, now)))
    .limit(BATCH);
  for (const job of lost) {
    // Taken for the new message first, conditionally, so that two sweeps never both re-send.
    if (!(await takeLost(ctx, LEASE, job))) continue;
    await enqueueGeneration(ctx, { job_id: job.id, generation: job.generation });
    requeued += 1;
  }
  return { expired, givenUp, requeued };
}
