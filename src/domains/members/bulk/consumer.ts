import { newId } from "../../../platform/ids";
import { handOver, isHeld, revertHandOver } from "../../../platform/jobs/lease";
import { parseMessage, queueDelaySeconds } from "../../../platform/queue";
import type { ServiceContext } from "../../../platform/service/context";
import {
  type BulkJob,
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

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

const GAVE_UP = "The upload could not be processed: it failed on every attempt. Upload the file again.";
const FILE_GONE = "The uploaded file is gone; upload it again.";

function isActive(job: BulkJob): boolean {
  return job.status === "queued" || job.status === "processing";
}

function secondsUntil(at: number | null, now: number): number {
  return queueDelaySeconds(((at ?? now) - now) / 1000, 1);
}

/**
 * The bulk queue (max_batch_size 1). A message names a job and the generation it continues; the
 * invocation claims the job under a lease (platform/jobs/lease.ts), applies chunks from the checkpoint
 * (each guarded on the checkpoint and the lease, and renewing it) and, out of time, hands the job to
 * a message of the next generation. A message of a past generation, or of a finished job, is
 * acknowledged; one whose job is held by a live invocation comes back when that lease runs out. A
 * message that never arrives is replaced by the minute sweep (sweep.ts) once the lease runs out.
 */
export async function consumeBulk(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  for (const message of batch.messages) await handleMessage(ctx, message);
}

async function handleMessage(ctx: ServiceContext, message: Message<unknown>): Promise<void> {
  const body = await parseMessage(BulkMessageSchema, message, {
    queue: "lingua-bulk-members",
    deadLetter: ctx.env.BULK_DLQ,
  });
  if (!body) return;
  const leaseId = newId("lse");
  const job = await claimJob(ctx, { message: body, leaseId });
  if (!job) {
    const current = await findJob(ctx, body.job_id);
    const now = ctx.now();
    if (current && isActive(current) && current.generation === body.generation && isHeld(current, now)) {
      // A twin of this message is being handled: come back when its lease would have run out.
      message.retry({ delaySeconds: secondsUntil(current.leaseUntil, now) });
    } else {
      message.ack();
    }
    return;
  }
  try {
    await process(ctx, { job, leaseId });
    message.ack();
  } catch (error) {
    log("warn", "bulk upload chunk failed; retrying", {
      job_id: job.id,
      attempt: message.attempts,
      error: error instanceof Error ? error.stack : String(error),
    });
    const delaySeconds = Math.min(300, 5 * 2 ** (message.attempts - 1));
    await releaseLease(ctx, { jobId: job.id, leaseId, retryInMs: delaySeconds * 1000 }).catch(
      () => undefined,
    );
    message.retry({ delaySeconds });
  }
}

async function process(ctx: ServiceContext, input: { job: BulkJob; leaseId: string }): Promise<void> {
  const { job, leaseId } = input;
  const settings = ctx.config.bulk;
  const started = ctx.now();
  const object = job.r2Key ? await ctx.env.EXPORTS_BUCKET.get(job.r2Key) : null;
  if (!object) {
    await markFailed(ctx, { jobId: job.id, reason: FILE_GONE });
    return;
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
  if (outcome.state !== "continue") return; // done, or another holder took the job over
  const current = outcome.job;
  if (!(await handOver(ctx, LEASE, { job: current, leaseId }))) return; // taken over meanwhile: the new holder carries on
  try {
    await enqueueBulk(ctx, { job_id: job.id, generation: current.generation + 1 });
  } catch (error) {
    // No message of the new generation exists, so nobody can have claimed the job: step back, and
    // let this message's retry carry on from the checkpoint.
    await revertHandOver(ctx, LEASE, current);
    throw error;
  }
}

/**
 * The bulk dead-letter queue: the queue gave up on a message. If the job is still at that message's
 * generation and nobody holds it, nothing else is carrying it: it has failed. A job held by a live
 * invocation is looked at again when that lease runs out.
 */
export async function consumeBulkDeadLetters(
  batch: MessageBatch<unknown>,
  ctx: ServiceContext,
): Promise<void> {
  for (const message of batch.messages) {
    const body = await parseMessage(BulkMessageSchema, message, { queue: "lingua-bulk-members-dlq" });
    if (!body) continue;
    const job = await findJob(ctx, body.job_id);
    if (!job || !isActive(job) || job.generation !== body.generation) {
      message.ack();
      continue;
    }
    const now = ctx.now();
    if (isHeld(job, now)) {
      message.retry({ delaySeconds: secondsUntil(job.leaseUntil, now) });
      continue;
    }
    const failed = await markFailed(ctx, {
      jobId: job.id,
      reason: GAVE_UP,
      unless: { generation: job.generation },
    });
    if (failed && job.r2Key) await ctx.env.EXPORTS_BUCKET.delete(job.r2Key).catch(() => undefined);
    message.ack();
  }
}
