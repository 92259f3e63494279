import { newId } from "../../platform/ids";
import { leasedJobConsumer } from "../../platform/jobs/consumer";
import { LEASE_MS } from "../../platform/jobs/lease";
import { sendMessage } from "../../platform/queue";
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
  await sendMessage(ctx, ctx.env.EXPORTS_QUEUE, message);
}

/**
 * The exports queue (max_batch_size 1, so one job per invocation), on the leased-job consumer
 * (platform/jobs/consumer.ts): a message generates its job for the time budget and hands the rest
 * to a continuation message. A generation that cannot succeed (ExportFailure) fails the job and its
 * file at once; other errors are retried with backoff; after the queue's retries the dead-letter
 * consumer fails the job.
 */
const exportsQueue = leasedJobConsumer<ExportMessage, ExportJob>({
  queue: "lingua-exports",
  noun: "export generation",
  idField: "export_id",
  schema: ExportMessageSchema,
  jobId: (message) => message.job_id,
  deadLetterQueue: (ctx) => ctx.env.EXPORTS_DLQ,
  lease: LEASE,
  claim: (ctx, message, leaseId) => claimJob(ctx, { message, leaseId, leaseUntil: ctx.now() + LEASE_MS }),
  find: findJob,
  isActive: (job) => ACTIVE_STATUSES.includes(job.status),
  async run(ctx, job, leaseId) {
    const settings = ctx.config.exports;
    const deadline = ctx.now() + settings.timeBudgetMs;
    const outcome = await generate(ctx, { job, leaseId, settings, deadline });
    return outcome === "continue" ? { state: "continue", job } : { state: "done" };
  },
  enqueue: (ctx, jobId, generation) => enqueueGeneration(ctx, { job_id: jobId, generation }),
  isLeaseLost: (error) => error instanceof LeaseLost,
  permanentFailure: (error) => (error instanceof ExportFailure ? error.message : null),
  async fail(ctx, job, leaseId, reason) {
    await failJob(ctx, { job, reason, leaseId });
  },
  release: (ctx, job, leaseId, retryInMs) => releaseLease(ctx, { jobId: job.id, leaseId, retryInMs }),
  async giveUp(ctx, job) {
    await failUnheldJob(ctx, { job, reason: GAVE_UP });
  },
});

export const consumeExports = exportsQueue.consume;
export const consumeExportDeadLetters = exportsQueue.consumeDeadLetters;

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
