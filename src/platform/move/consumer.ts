import { and } from "drizzle-orm";
import { institutionMoves } from "../../db/schema";
import { leasedJobConsumer } from "../jobs/consumer";
import { expired, takeLost } from "../jobs/lease";
import { type ServiceContext, useDatabase } from "../service/context";
import { FIRST_DATABASE } from "../service/databases";
import {
  claimMove,
  enqueueMove,
  failUnheld,
  findMove,
  type InstitutionMove,
  isActive,
  isActiveState,
  LEASE,
  MoveLeaseLost,
  type MoveMessage,
  MoveMessageSchema,
  releaseMove,
} from "./jobs";
import { abandon, runMove } from "./run";

/** How long one invocation works on a move before it hands the rest to the next message. */
export const MOVE_TIME_BUDGET_MS = 25_000;

export const GAVE_UP =
  "The move could not be completed: it failed on every attempt. Stopped before its switch, the institution stays in the source and the copy in the target is deleted; stopped after it, the institution lives in the target, and what is left in the source is removed by moving it again.";

/**
 * The moves' queue (`lingua-institution-moves`, max_batch_size 1) on the leased-job consumer
 * (platform/jobs/consumer.ts). A move's rows are in `DB`: its messages are sent from there, and run
 * there (the source and the target are reached through `everyDatabase`).
 */
const moveQueue = leasedJobConsumer<MoveMessage, InstitutionMove>({
  queue: "lingua-institution-moves",
  noun: "institution move",
  idField: "move_id",
  schema: MoveMessageSchema,
  jobId: (message) => message.move_id,
  deadLetterQueue: (ctx) => ctx.env.INSTITUTION_MOVE_DLQ,
  lease: LEASE,
  claim: (ctx, message, leaseId) => claimMove(ctx, { message, leaseId }),
  find: findMove,
  isActive: (job) => isActiveState(job.state),
  async run(ctx, job, leaseId) {
    const outcome = await runMove(ctx, job, leaseId, ctx.now() + MOVE_TIME_BUDGET_MS);
    return outcome === "continue" ? { state: "continue", job } : { state: "done" };
  },
  enqueue: (ctx, moveId, generation) => enqueueMove(ctx, { move_id: moveId, generation }),
  isLeaseLost: (error) => error instanceof MoveLeaseLost,
  release: (ctx, job, leaseId, retryInMs) => releaseMove(ctx, job.id, leaseId, retryInMs),
  async giveUp(ctx, job) {
    if (await failUnheld(ctx, job, GAVE_UP)) await abandon(ctx, job);
  },
});

function inFirstDatabase(ctx: ServiceContext): ServiceContext {
  useDatabase(ctx, FIRST_DATABASE);
  return ctx;
}

export const consumeMoves = (batch: MessageBatch<unknown>, ctx: ServiceContext) =>
  moveQueue.consume(batch, inFirstDatabase(ctx));
export const consumeMoveDeadLetters = (batch: MessageBatch<unknown>, ctx: ServiceContext) =>
  moveQueue.consumeDeadLetters(batch, inFirstDatabase(ctx));

/**
 * The minute cron's sweep of moves (it acts in `DB` only, where the moves are): a move whose lease
 * ran out (its invocation died, or its message is past its due time and the grace) is taken for a
 * new message of its current generation, conditionally, and carries on from its checkpoint.
 */
export async function sweepMoves(ctx: ServiceContext): Promise<{ resumed: number }> {
  if (ctx.database !== FIRST_DATABASE) return { resumed: 0 };
  const lost = await ctx.db
    .select({ id: institutionMoves.id, generation: institutionMoves.generation })
    .from(institutionMoves)
    .where(and(isActive(), expired(LEASE, ctx.now())))
    .limit(20);
  let resumed = 0;
  for (const job of lost) {
    if (!(await takeLost(ctx, LEASE, job))) continue;
    await enqueueMove(ctx, { move_id: job.id, generation: job.generation });
    resumed += 1;
  }
  return { resumed };
}
