import { newId } from "../../../platform/ids";
import { handOver, isHeld, revertHandOver } from "../../../platform/jobs/lease";
import { parseMessage, queueDelaySeconds } from "../../../platform/queue";
import type { ServiceContext } from "../../../platform/service/context";
import {
  type Backfill,
  BackfillMessageSchema,
  claimBackfill,
  enqueueBackfill,
  findBackfill,
  isActiveStatus,
  LEASE,
  markFailed,
  releaseLease,
} from "./jobs";
import { runBackfill } from "./run";

export const GAVE_UP =
  "The back-fill could not be completed: it failed on every attempt. What it queued before stays queued; start a new back-fill to forward the rest.";

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

function secondsUntil(at: number | null, now: number): number {
  return queueDelaySeconds(((at ?? now) - now) / 1000, 1);
}

/**
 * The back-fill queue (max_batch_size 1). A message names a back-fill and the generation it
 * continues; the invocation claims it under a lease (platform/jobs/lease.ts), works chunk by chunk
 * from the checkpoint for its time budget (run.ts) and hands the rest to a message of the next
 * generation. A message of a past generation or of a finished back-fill is acknowledged; one whose
 * back-fill is held by a live invocation comes back when that lease would run out. A message that
 * never arrives is replaced by the minute sweep (sweep.ts) once the lease has run out.
 */
export async function consumeBackfills(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  for (const message of batch.messages) await handleMessage(ctx, message);
}

async function handleMessage(ctx: ServiceContext, message: Message<unknown>): Promise<void> {
  const body = await parseMessage(BackfillMessageSchema, message, {
    queue: "lingua-xapi-backfills",
    deadLetter: ctx.env.XAPI_BACKFILL_DLQ,
  });
  if (!body) return;
  const leaseId = newId("lse");
  const job = await claimBackfill(ctx, { message: body, leaseId });
  if (!job) {
    const current = await findBackfill(ctx, body.backfill_id);
    const now = ctx.now();
    if (
      current &&
      isActiveStatus(current.status) &&
      current.generation === body.generation &&
      isHeld(current, now)
    ) {
      // A twin of this message is being handled: come back when its lease would have run out.
      message.retry({ delaySeconds: secondsUntil(current.leaseUntil, now) });
    } else {
      message.ack();
    }
    return;
  }
  try {
    const started = ctx.now();
    const outcome = await runBackfill(ctx, {
      job,
      leaseId,
      deadline: started + ctx.config.xapiBackfill.timeBudgetMs,
    });
    if (outcome === "continue") await continueLater(ctx, job, leaseId);
    message.ack();
  } catch (error) {
    log("warn", "xAPI back-fill chunk failed; retrying", {
      backfill_id: job.id,
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

/** Hands the back-fill to a message of the next generation; the current one is then done. */
async function continueLater(ctx: ServiceContext, job: Backfill, leaseId: string): Promise<void> {
  if (!(await handOver(ctx, LEASE, { job, leaseId }))) return; // taken over meanwhile: the new holder carries on
  try {
    await enqueueBackfill(ctx, { backfill_id: job.id, generation: job.generation + 1 });
  } catch (error) {
    // No message of the new generation exists, so nobody can have claimed the job: step back, and
    // let this message's retry carry on from the checkpoint.
    await revertHandOver(ctx, LEASE, job);
    throw error;
  }
}

/**
 * The back-fill dead-letter queue: the queue gave up on a message. If the back-fill is still at that
 * message's generation and nobody holds it, nothing else carries it: it has failed. One held by a
 * live invocation is looked at again when that lease runs out.
 */
export async function consumeBackfillDeadLetters(
  batch: MessageBatch<unknown>,
  ctx: ServiceContext,
): Promise<void> {
  for (const message of batch.messages) {
    const body = await parseMessage(BackfillMessageSchema, message, { queue: "lingua-xapi-backfills-dlq" });
    if (!body) continue;
    const job = await findBackfill(ctx, body.backfill_id);
    if (!job || !isActiveStatus(job.status) || job.generation !== body.generation) {
      message.ack();
      continue;
    }
    const now = ctx.now();
    if (isHeld(job, now)) {
      message.retry({ delaySeconds: secondsUntil(job.leaseUntil, now) });
      continue;
    }
    await markFailed(ctx, { jobId: job.id, reason: GAVE_UP, generation: job.generation });
    message.ack();
  }
}
