import { and, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { type ExportStatus, exportJobs } from "../../db/schema";
import { domainEvent } from "../../platform/events";
import { nowIso } from "../../platform/ids";
import { awaitingMessage, claimable, type LeasedJobs } from "../../platform/jobs/lease";
import { commit } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import type { Checkpoint } from "./writer";

/**
 * The generation side of export_jobs: claiming a job for one invocation, checkpoints, hand-over to
 * a continuation message, completion and failure. Every write is conditional on the state it
 * expects (the lease, the part count, the generation), so two deliveries of one queue message, a
 * crashed invocation's zombie or a sweep can never write over each other.
 */

export type ExportJob = typeof exportJobs.$inferSelect;

/** An exports queue message: generate job `job_id` from its checkpoint, as generation `generation`. */
export const ExportMessageSchema = z.object({
  job_id: z.string().min(1),
  generation: z.number().int().min(0),
});

export type ExportMessage = z.infer<typeof ExportMessageSchema>;

export const ACTIVE_STATUSES: ExportStatus[] = ["queued", "processing"];

/** The job is still to be generated (queued or processing). */
export const isActive = () => inArray(exportJobs.status, ACTIVE_STATUSES);

/** The job's lease columns (platform/jobs/lease.ts). */
export const LEASE: LeasedJobs = {
  table: exportJobs,
  id: exportJobs.id,
  generation: exportJobs.generation,
  leaseId: exportJobs.leaseId,
  leaseUntil: exportJobs.leaseUntil,
  active: () => isActive(),
};

/** No invocation holds a live lease on the job: it awaits a message, or its holder's lease ran out at `now`. */
export const leaseFree = (now: number) => claimable(LEASE, now);

export function downloadPath(jobId: string): string {
  return `/api/integrations/exports/${jobId}/download`;
}

/**
 * Takes the job for this invocation until `leaseUntil`, if it is active, at the message's
 * generation and not leased to a live invocation. Returns the job, or null.
 */
export async function claimJob(
  ctx: ServiceContext,
  input: { message: ExportMessage; leaseId: string; leaseUntil: number },
): Promise<ExportJob | null> {
  const { message, leaseId, leaseUntil } = input;
  const now = ctx.now();
  const [job] = await ctx.db
    .update(exportJobs)
    .set({
      status: "processing",
      startedAt: sql`coalesce(${exportJobs.startedAt}, ${nowIso(now)})`,
      leaseId,
      leaseUntil,
      attempts: sql`${exportJobs.attempts} + 1`,
      heartbeatAt: now,
    })
    .where(
      and(
        eq(exportJobs.id, message.job_id),
        isActive(),
        eq(exportJobs.generation, message.generation),
        leaseFree(now),
      ),
    )
    .returning();
  return job ?? null;
}

export async function findJob(ctx: ServiceContext, jobId: string): Promise<ExportJob | null> {
  return (await ctx.db.select().from(exportJobs).where(eq(exportJobs.id, jobId)).get()) ?? null;
}

function mine(jobId: string, leaseId: string) {
  return and(eq(exportJobs.id, jobId), eq(exportJobs.leaseId, leaseId));
}

/**
 * Persists a checkpoint after its part's upload, and renews the lease. Applies only if the job still
 * has this lease and exactly the parts before this one (`expectedParts`).
 */
export async function saveCheckpoint(
  ctx: ServiceContext,
  input: {
    job: Pick<ExportJob, "id" | "uploadId" | "partSize">;
    leaseId: string;
    state: Checkpoint;
    expectedParts: number;
    leaseUntil: number;
  },
): Promise<boolean> {
  const { job, leaseId, state, expectedParts, leaseUntil } = input;
  const result = await ctx.db
    .update(exportJobs)
    .set({
      parts: state.parts,
      cursor: state.cursor,
      progress: state.progress,
      uploadId: job.uploadId,
      partSize: job.partSize,
      heartbeatAt: ctx.now(),
      leaseUntil,
      ...(state.totals ? { rowCount: state.totals.rowCount, byteSize: state.totals.byteSize } : {}),
    })
    .where(and(mine(job.id, leaseId), sql`json_array_length(${exportJobs.parts}) = ${expectedParts}`))
    .run();
  return result.meta.changes === 1;
}

/**
 * Extends this invocation's lease before it writes to R2, if it still holds it at this generation.
 * False: the lease ran out and somebody else took the job (or it finished, or failed), so whatever
 * this invocation was about to write would land in a file that is no longer its own.
 */
export async function renewLease(
  ctx: ServiceContext,
  input: { job: Pick<ExportJob, "id" | "generation">; leaseId: string; leaseUntil: number },
): Promise<boolean> {
  const { job, leaseId, leaseUntil } = input;
  const result = await ctx.db
    .update(exportJobs)
    .set({ leaseUntil })
    .where(and(mine(job.id, leaseId), eq(exportJobs.generation, job.generation), isActive()))
    .run();
  return result.meta.changes === 1;
}

/**
 * Takes an active job that nobody holds, at the generation the caller looked at, without claiming
 * it for generation (status and attempts unchanged): the dead-letter consumer and the give-up sweep
 * hold it this way while they delete its file and fail it, so no invocation can complete it meanwhile.
 */
export async function leaseToFail(
  ctx: ServiceContext,
  input: { job: Pick<ExportJob, "id" | "generation">; leaseId: string; leaseUntil: number },
): Promise<boolean> {
  const { job, leaseId, leaseUntil } = input;
  const result = await ctx.db
    .update(exportJobs)
    .set({ leaseId, leaseUntil })
    .where(
      and(
        eq(exportJobs.id, job.id),
        isActive(),
        eq(exportJobs.generation, job.generation),
        leaseFree(ctx.now()),
      ),
    )
    .run();
  return result.meta.changes === 1;
}

/**
 * Gives the job back after an error, to the retried message due in `retryInMs` (so that it need not
 * wait for the lease to run out, and the sweep does not take the job for lost while it waits).
 */
export async function releaseLease(
  ctx: ServiceContext,
  input: { jobId: string; leaseId: string; retryInMs: number },
): Promise<void> {
  await ctx.db
    .update(exportJobs)
    .set(awaitingMessage(ctx.now(), input.retryInMs))
    .where(mine(input.jobId, input.leaseId))
    .run();
}

/**
 * `completed`, with the `export.completed` event committed in the same batch only if the update
 * applied (and then published). False when the job was not this lease's any more.
 */
export async function markCompleted(
  ctx: ServiceContext,
  input: {
    job: ExportJob;
    leaseId: string;
    totals: { rowCount: number; byteSize: number };
    retentionDays: number;
  },
): Promise<boolean> {
  const { job, leaseId, totals, retentionDays } = input;
  const now = ctx.now();
  const completedAt = nowIso(now);
  const expiresAt = nowIso(now + retentionDays * 86_400_000);
  const event = domainEvent(
    "export.completed",
    { institutionId: job.institutionId, userId: job.requestedBy },
    {
      export_id: job.id,
      type: job.type,
      row_count: totals.rowCount,
      byte_size: totals.byteSize,
      download_url: downloadPath(job.id),
      expires_at: expiresAt,
    },
    completedAt,
  );
  const update = ctx.db
    .update(exportJobs)
    .set({
      status: "completed",
      rowCount: totals.rowCount,
      byteSize: totals.byteSize,
      progress: totals.rowCount,
      completedAt,
      expiresAt,
      leaseId: null,
      leaseUntil: null,
      heartbeatAt: now,
    })
    .where(and(mine(job.id, leaseId), eq(exportJobs.status, "processing")));
  return changedOne(await commit(ctx, { statements: [update], events: [event], eventsIfLastChanged: true }));
}

/**
 * `failed` with `reason`, and the `export.failed` event committed with it, if the job is still
 * active under this lease. False when it was not.
 */
export async function markFailed(
  ctx: ServiceContext,
  input: { job: ExportJob; reason: string; leaseId: string },
): Promise<boolean> {
  const { job, reason, leaseId } = input;
  const now = ctx.now();
  const event = domainEvent(
    "export.failed",
    { institutionId: job.institutionId, userId: job.requestedBy },
    { export_id: job.id, type: job.type, error: reason },
    nowIso(now),
  );
  const update = ctx.db
    .update(exportJobs)
    .set({ status: "failed", error: reason, leaseId: null, leaseUntil: null, heartbeatAt: now })
    .where(and(mine(job.id, leaseId), isActive()));
  return changedOne(await commit(ctx, { statements: [update], events: [event], eventsIfLastChanged: true }));
}

/** The status change (the change's one statement) applied to the job. */
function changedOne(committed: { results: D1Result[] }): boolean {
  return committed.results[0]?.meta.changes === 1;
}
