import { leasedJobConsumer } from "../../../platform/jobs/consumer";
import {
  type Backfill,
  type BackfillMessage,
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

/**
 * The back-fill queue (max_batch_size 1), on the leased-job consumer (platform/jobs/consumer.ts): a
 * message works on its back-fill chunk by chunk from the checkpoint for its time budget (run.ts) and
 * hands the rest to a message of the next generation. A message that never arrives is replaced by
 * the minute sweep (sweep.ts) once the lease has run out.
 */
const backfillQueue = leasedJobConsumer<BackfillMessage, Backfill>({
  queue: "lingua-xapi-backfills",
  noun: "xAPI back-fill chunk",
  idField: "backfill_id",
  schema: BackfillMessageSchema,
  jobId: (message) => message.backfill_id,
  deadLetterQueue: (ctx) => ctx.env.XAPI_BACKFILL_DLQ,
  lease: LEASE,
  claim: (ctx, message, leaseId) => claimBackfill(ctx, { message, leaseId }),
  find: findBackfill,
  isActive: (job) => isActiveStatus(job.status),
  async run(ctx, job, leaseId) {
    const deadline = ctx.now() + ctx.config.xapiBackfill.timeBudgetMs;
    const outcome = await runBackfill(ctx, { job, leaseId, deadline });
    return outcome === "continue" ? { state: "continue", job } : { state: "done" };
  },
  enqueue: (ctx, backfillId, generation) => enqueueBackfill(ctx, { backfill_id: backfillId, generation }),
  release: (ctx, job, leaseId, retryInMs) => releaseLease(ctx, { jobId: job.id, leaseId, retryInMs }),
  async giveUp(ctx, job) {
    await markFailed(ctx, { jobId: job.id, reason: GAVE_UP, generation: job.generation });
  },
});

export const consumeBackfills = backfillQueue.consume;
export const consumeBackfillDeadLetters = backfillQueue.consumeDeadLetters;
