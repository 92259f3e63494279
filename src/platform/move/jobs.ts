import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { type InstitutionMoveState, institutionMoves } from "../../db/schema";
import { nowIso } from "../ids";
import { awaitingMessage, claimable, heldBy, type LeasedJobs, renewed, taken } from "../jobs/lease";
import { sendMessage } from "../queue";
import type { ServiceContext } from "../service/context";

/**
 * The job side of `institution_moves` (in `DB`, read and written through `ctx.home`): claiming a
 * move for one invocation, its checkpoints, completion and failure, on the platform's leases
 * (platform/jobs/lease.ts). Every write of a holder is conditional on its lease.
 */

export type InstitutionMove = typeof institutionMoves.$inferSelect;

/** Where the move is within its state: the table (by its index in the copy order) and the last key done. */
export interface MoveCursor {
  table: number;
  after: unknown[] | null;
  /** The pass over every table (the switch's last copy and verification repeat until both sides match). */
  pass: number;
  /** Within the switch: `prune` the target, `copy` again, then `verify`. */
  step?: "prune" | "copy" | "verify";
}

export const MoveMessageSchema = z.object({
  move_id: z.string().min(1),
  generation: z.number().int().min(0),
});
export type MoveMessage = z.infer<typeof MoveMessageSchema>;

const ACTIVE: InstitutionMoveState[] = ["queued", "copying", "switching", "deleting"];
export const isActive = () => inArray(institutionMoves.state, ACTIVE);
export function isActiveState(state: InstitutionMoveState): boolean {
  return ACTIVE.includes(state);
}

export const LEASE: LeasedJobs = {
  table: institutionMoves,
  id: institutionMoves.id,
  generation: institutionMoves.generation,
  leaseId: institutionMoves.leaseId,
  leaseUntil: institutionMoves.leaseUntil,
  active: () => isActive(),
};

export async function enqueueMove(ctx: ServiceContext, message: MoveMessage): Promise<void> {
  await sendMessage(ctx, ctx.env.INSTITUTION_MOVE_QUEUE, message);
}

export async function findMove(ctx: ServiceContext, id: string): Promise<InstitutionMove | null> {
  return (await ctx.home.db.select().from(institutionMoves).where(eq(institutionMoves.id, id)).get()) ?? null;
}

/** Takes the move for this invocation (active, at the message's generation, nobody holding it). */
export async function claimMove(
  ctx: ServiceContext,
  input: { message: MoveMessage; leaseId: string },
): Promise<InstitutionMove | null> {
  const { message, leaseId } = input;
  const now = ctx.now();
  const [job] = await ctx.home.db
    .update(institutionMoves)
    .set({ ...taken(leaseId, now), heartbeatAt: now })
    .where(
      and(
        eq(institutionMoves.id, message.move_id),
        isActive(),
        eq(institutionMoves.generation, message.generation),
        claimable(LEASE, now),
      ),
    )
    .returning();
  return job ?? null;
}

const held = (job: Pick<InstitutionMove, "id" | "generation">, leaseId: string) =>
  and(
    eq(institutionMoves.id, job.id),
    heldBy(LEASE, leaseId),
    eq(institutionMoves.generation, job.generation),
  );

/** The holder lost the move: its run stops, whoever holds it now goes on. */
export class MoveLeaseLost extends Error {
  constructor() {
    super("the move's lease was lost");
  }
}

/**
 * Records where the move is (its state, cursor, progress and times), renewing the lease; throws
 * `MoveLeaseLost` when this invocation no longer holds it.
 */
export async function checkpoint(
  ctx: ServiceContext,
  job: InstitutionMove,
  leaseId: string,
  changes: Partial<Pick<InstitutionMove, "state" | "cursor" | "progress" | "frozenAt" | "switchedAt">>,
): Promise<void> {
  const now = ctx.now();
  const result = await ctx.home.db
    .update(institutionMoves)
    .set({ ...changes, ...renewed(now), heartbeatAt: now })
    .where(and(held(job, leaseId), isActive()))
    .run();
  if (result.meta.changes !== 1) throw new MoveLeaseLost();
  Object.assign(job, changes);
}

/** `completed` or `failed` (with its reason), if this lease still holds the move. */
export async function finish(
  ctx: ServiceContext,
  job: InstitutionMove,
  leaseId: string,
  outcome: { state: "completed" } | { state: "failed"; error: string },
): Promise<void> {
  const now = ctx.now();
  const result = await ctx.home.db
    .update(institutionMoves)
    .set({
      state: outcome.state,
      error: outcome.state === "failed" ? outcome.error : null,
      completedAt: nowIso(now),
      heartbeatAt: now,
      leaseId: null,
      leaseUntil: null,
    })
    .where(held(job, leaseId))
    .run();
  if (result.meta.changes !== 1) throw new MoveLeaseLost();
  Object.assign(job, { state: outcome.state });
}

/** Fails a move nobody holds (the dead-letter consumer), if it is still at `generation`. */
export async function failUnheld(
  ctx: ServiceContext,
  job: InstitutionMove,
  reason: string,
): Promise<boolean> {
  const now = ctx.now();
  const failed = await ctx.home.db
    .update(institutionMoves)
    .set({
      state: "failed",
      error: reason,
      completedAt: nowIso(now),
      heartbeatAt: now,
      leaseId: null,
      leaseUntil: null,
    })
    .where(
      and(
        eq(institutionMoves.id, job.id),
        isActive(),
        eq(institutionMoves.generation, job.generation),
        claimable(LEASE, now),
      ),
    )
    .run();
  return failed.meta.changes === 1;
}

/** Gives the move back after an error to the message's retry, due in `retryInMs`. */
export async function releaseMove(ctx: ServiceContext, jobId: string, leaseId: string, retryInMs: number) {
  await ctx.home.db
    .update(institutionMoves)
    .set(awaitingMessage(ctx.now(), retryInMs))
    .where(and(eq(institutionMoves.id, jobId), heldBy(LEASE, leaseId)))
    .run();
}
