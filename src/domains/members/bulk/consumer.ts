import { type JobRunOutcome, leasedJobConsumer } from "../../../platform/jobs/consumer";
import type { ServiceContext } from "../../../platform/service/context";
import {
  type BulkJob,
  type BulkMessage,
  BulkMessageSchema,
  claimJob,
  enqueueBulk,
  findJob,
  LEASE,
  markFailed,
  readStoredFile,
  releaseLease,
} from "./jobs";
import { runJob } from "./runner";

const GAVE_UP = "The upload could not be processed: it failed on every attempt. Upload the file again.";
const FILE_GONE = "The uploaded file is gone; upload it again.";

/**
 * The bulk queue (max_batch_size 1), on the leased-job consumer (platform/jobs/consumer.ts): the
 * invocation applies chunks from the checkpoint (each guarded on the checkpoint and the lease, and
 * renewing it) and, out of time, hands the job to a message of the next generation. A message that
 * never arrives is replaced by the minute sweep (sweep.ts) once the lease runs out.
 */
const bulkQueue = leasedJobConsumer<BulkMessage, BulkJob>({
  queue: "lingua-bulk-members",
  noun: "bulk upload chunk",
  idField: "job_id",
  schema: BulkMessageSchema,
  jobId: (message) => message.job_id,
  deadLetterQueue: (ctx) => ctx.env.BULK_DLQ,
  lease: LEASE,
  claim: (ctx, message, leaseId) => claimJob(ctx, { message, leaseId }),
  find: findJob,
  isActive: (job) => job.status === "queued" || job.status === "processing",
  run: (ctx, job) => process(ctx, job),
  enqueue: (ctx, jobId, generation) => enqueueBulk(ctx, { job_id: jobId, generation }),
  release: (ctx, job, leaseId, retryInMs) => releaseLease(ctx, { jobId: job.id, leaseId, retryInMs }),
  async giveUp(ctx, job) {
    const failed = await markFailed(ctx, {
      jobId: job.id,
      reason: GAVE_UP,
      unless: { generation: job.generation },
    });
    if (failed && job.r2Key) await ctx.env.EXPORTS_BUCKET.delete(job.r2Key).catch(() => undefined);
  },
});

export const consumeBulk = bulkQueue.consume;
export const consumeBulkDeadLetters = bulkQueue.consumeDeadLetters;

async function process(ctx: ServiceContext, job: BulkJob): Promise<JobRunOutcome<BulkJob>> {
  const settings = ctx.config.bulk;
  const started = ctx.now();
  const object = job.r2Key ? await ctx.env.EXPORTS_BUCKET.get(job.r2Key) : null;
  if (!object) {
    await markFailed(ctx, { jobId: job.id, reason: FILE_GONE });
    return { state: "done" };
  }
  const parsedFile = readStoredFile(new Uint8Array(await object.arrayBuffer()));
  const outcome = await runJob(ctx, {
    job,
    parsed: parsedFile,
    options: {
      chunkRows: settings.chunkRows,
      deadline: started + settings.timeBudgetMs,
      invitations: "defer",
      collect: false,
    },
  });
  // Done, or another holder took the job over; else the rest goes to the next message.
  return outcome.state === "continue" ? { state: "continue", job: outcome.job } : { state: "done" };
}
