import { newId } from "../../platform/ids";
import { handOver, isHeld, LEASE_MS, revertHandOver } from "../../platform/jobs/lease";
import { parseMessage, queueDelaySeconds } from "../../platform/queue";
import type { ServiceContext } from "../../platform/service/context";
import { generate } from "./generate";
import {
  ACTIVE_STATUSES,
  claimJob,
  type ExportJob,
  type ExportMessage,
  ExportMessageSchema,
  findJob,
  LEASE,
  leaseToFail,
  markFailed,
  releaseLease,
  renewLease,
} from "./jobs";
import { ExportFailure, LeaseLost } from "./writer";

export const GAVE_UP =
  "The export could not be generated: it failed on every attempt. Request it again; if that fails too, contact support with the export id.";

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

/** Sends the message that generates (or continues) a job. */
export async function enqueueGeneration(ctx: ServiceContext, message: ExportMessage): Promise<void> {
  await ctx.env.EXPORTS_QUEUE.send(message, { contentType: "json" });
}

function secondsUntil(at: number | null, now: number): number {
  return queueDelaySeconds(((at ?? now) - now) / 1000, 1);
}

/**
 * The exports queue (max_batch_size 1, so one job per invocation). A message names a job and the
 * generation it continues; it is acknowledged once the job is finished, failed, handed over to a
 * continuation message, or not its business any more (another generation, a terminal status).
 * Errors are retried with backoff; after the queue's retries the dead-letter consumer fails the job.
 */
export async function consumeExports(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  for (const message of batch.messages) await handleMessage(ctx, message);
}

async function handleMessage(ctx: ServiceContext, message: Message<unknown>): Promise<void> {
  const body = await parseMessage(ExportMessageSchema, message, {
    queue: "lingua-exports",
    deadLetter: ctx.env.EXPORTS_DLQ,
  });
  if (!body) return; // logged, dead-lettered and acknowledged
  const settings = ctx.config.exports;
  const leaseId = newId("lse");
  const now = ctx.now();
  const leaseUntil = now + LEASE_MS;
  const job = await claimJob(ctx, { message: body, leaseId, leaseUntil });
  if (!job) {
    const current = await findJob(ctx, body.job_id);
    if (current && ACTIVE_STATUSES.includes(current.status) && current.generation === body.generation) {
      // A twin of this message is being handled: come back when its lease would have run out.
      message.retry({ delaySeconds: secondsUntil(current.leaseUntil, now) });
    } else {
      message.ack();
    }
    return;
  }

  try {
    const outcome = await generate(ctx, { job, leaseId, settings, deadline: now + settings.timeBudgetMs });
    if (outcome === "continue") await continueLater(ctx, job, leaseId);
    message.ack();
  } catch (error) {
    if (error instanceof LeaseLost) {
      message.ack();
      return;
    }
    let cause: unknown = error;
    if (error instanceof ExportFailure) {
      try {
        await failJob(ctx, { job, reason: error.message, leaseId });
        message.ack();
        return;
      } catch (cleanup) {
        // The file could not be deleted, so the job is still active: the retry meets the same
        // failure and tries again.
        cause = cleanup;
      }
    }
    log("warn", "export generation failed; retrying", {
      export_id: job.id,
      attempt: message.attempts,
      error: cause instanceof Error ? cause.stack : String(cause),
    });
    const delaySeconds = Math.min(300, 5 * 2 ** (message.attempts - 1));
    await releaseLease(ctx, { jobId: job.id, leaseId, retryInMs: delaySeconds * 1000 }).catch(
      () => undefined,
    );
    message.retry({ delaySeconds });
  }
}

/** Hands the job to a new message of the next generation; the current one is then done. */
async function continueLater(ctx: ServiceContext, job: ExportJob, leaseId: string): Promise<void> {
  if (!(await handOver(ctx, LEASE, { job, leaseId }))) throw new LeaseLost();
  try {
    await enqueueGeneration(ctx, { job_id: job.id, generation: job.generation + 1 });
  } catch (error) {
    // No message of the new generation exists, so nobody can have claimed the job: step back, and
    // let this message's retry carry on from the checkpoint.
    await revertHandOver(ctx, LEASE, job);
    throw error;
  }
}

/** How long the dead-letter consumer and the give-up sweep hold a job while they fail it: two R2 calls and a D1 batch. */
const FAIL_LEASE_MS = LEASE_MS;

/**
 * A job fails for good, and its file with it. Whatever was written to R2 goes: the multipart
 * upload is aborted and the key deleted, because the whole file may already be there (a plain PUT,
 * or a completed upload whose `completed` status never got written). Then the status and the
 * `export.failed` event are committed in one batch. The caller holds the job's lease, so no
 * invocation can complete it while its file is deleted.
 *
 * The file goes before the status: if R2 fails, the job is still active and whoever retries (the
 * message's retry, the dead-letter retry, the next sweep) fails it again; once `failed`, nothing
 * would come back for it. It is deleted once more after the status change, for an invocation that
 * outlived its lease and wrote in between; one that writes later finds the job failed and deletes
 * its own file (generate.ts). Returns false when the lease was lost before the status changed.
 */
export async function failJob(
  ctx: ServiceContext,
  input: { job: ExportJob; reason: string; leaseId: string },
): Promise<boolean> {
  const { job, reason, leaseId } = input;
  if (!(await renewLease(ctx, { job, leaseId, leaseUntil: ctx.now() + FAIL_LEASE_MS }))) return false;
  // Read again under the lease: this invocation may have created the upload since it claimed the job.
  const current = (await findJob(ctx, job.id)) ?? job;
  await discardFile(ctx, current);
  if (!(await markFailed(ctx, { job: current, reason, leaseId }))) return false;
  await discardFile(ctx, current).catch((error) =>
    log("warn", "could not delete a failed export's file again", { export_id: job.id, error: String(error) }),
  );
  log("info", "export failed", { export_id: job.id, reason });
  return true;
}

/**
 * Fails a job that no invocation holds (the dead-letter consumer, the give-up sweep): it is leased
 * first, at the generation the caller saw. False when somebody else holds or moved it meanwhile.
 * Throws, with the lease given back, when its file could not be deleted; the job stays active.
 */
export async function failUnheldJob(
  ctx: ServiceContext,
  input: { job: ExportJob; reason: string },
): Promise<boolean> {
  const { job, reason } = input;
  const leaseId = newId("lse");
  if (!(await leaseToFail(ctx, { job, leaseId, leaseUntil: ctx.now() + FAIL_LEASE_MS }))) return false;
  try {
    return await failJob(ctx, { job, reason, leaseId });
  } catch (error) {
    // Back to the next sweep (or the dead-letter message's retry, in 30 s).
    await releaseLease(ctx, { jobId: job.id, leaseId, retryInMs: 30_000 }).catch(() => undefined);
    throw error;
  }
}

async function discardFile(ctx: ServiceContext, job: ExportJob): Promise<void> {
  if (job.uploadId) {
    try {
      await ctx.env.EXPORTS_BUCKET.resumeMultipartUpload(job.r2Key, job.uploadId).abort();
    } catch (error) {
      // Already completed or aborted; an upload left open is aborted by R2 after 7 days anyway.
      log("warn", "could not abort an export's multipart upload", {
        export_id: job.id,
        error: String(error),
      });
    }
  }
  await ctx.env.EXPORTS_BUCKET.delete(job.r2Key);
}

/**
 * The exports dead-letter queue: a message the queue gave up on. If it still is the job's current
 * generation (no later message took over) and nobody holds the job, the job has failed.
 */
export async function consumeExportDeadLetters(
  batch: MessageBatch<unknown>,
  ctx: ServiceContext,
): Promise<void> {
  for (const message of batch.messages) {
    const body = await parseMessage(ExportMessageSchema, message, { queue: "lingua-exports-dlq" });
    if (!body) continue; // logged and acknowledged: nothing names a job to fail
    const job = await findJob(ctx, body.job_id);
    if (!job || !ACTIVE_STATUSES.includes(job.status) || job.generation !== body.generation) {
      message.ack();
      continue;
    }
    const now = ctx.now();
    if (isHeld(job, now)) {
      message.retry({ delaySeconds: secondsUntil(job.leaseUntil, now) });
      continue;
    }
    try {
      await failUnheldJob(ctx, { job, reason: GAVE_UP });
      message.ack();
    } catch (error) {
      log("warn", "could not fail a dead-lettered export; retrying", {
        export_id: job.id,
        error: String(error),
      });
      message.retry({ delaySeconds: 30 });
    }
  }
}
