import { and, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { type XapiBackfillStatus, xapiBackfills } from "../../../db/schema";
import { nowIso } from "../../../platform/ids";
import {
  awaitingMessage,
  claimable,
  heldBy,
  type LeasedJobs,
  renewed,
  taken,
} from "../../../platform/jobs/lease";
import { sendMessage } from "../../../platform/queue";
import type { ServiceContext } from "../../../platform/service/context";

/**
 * The job side of `xapi_backfills`: claiming a back-fill for one invocation, its checkpoints, the
 * hand-over to a continuation message, completion and failure, on the platform's leases
 * (platform/jobs/lease.ts). Every write of a holder is conditional on its lease, so a redelivered
 * message, a holder presumed dead or a sweep never write over each other.
 */

export type Backfill = typeof xapiBackfills.$inferSelect;

/** Where a back-fill is: the source it reads and the key of the last row it offered (null: none yet). */
export interface BackfillCursor {
  source: BackfillSource;
  after: string[] | null;
}

/**
 * The sources a back-fill reads, in this order: the endpoint's failed statements (sent again), then
 * the activity tables and the outbox's CEFR changes (offered as facts).
 */
export const BACKFILL_SOURCES = [
  "failed",
  "attempts",
  "lessons",
  "courses",
  "achievements",
  "levels",
] as const;
export type BackfillSource = (typeof BACKFILL_SOURCES)[number];

/** A back-fill queue message: continue back-fill `backfill_id` from its checkpoint, as `generation`. */
export const BackfillMessageSchema = z.object({
  backfill_id: z.string().min(1),
  generation: z.number().int().min(0),
});
export type BackfillMessage = z.infer<typeof BackfillMessageSchema>;

const ACTIVE: XapiBackfillStatus[] = ["queued", "running"];

/** The back-fill is still to be done (queued or running). */
export const isActive = () => inArray(xapiBackfills.status, ACTIVE);

export function isActiveStatus(status: XapiBackfillStatus): boolean {
  return ACTIVE.includes(status);
}

/** The back-fills' table as the lease mechanism sees it. */
export const LEASE: LeasedJobs = {
  table: xapiBackfills,
  id: xapiBackfills.id,
  generation: xapiBackfills.generation,
  leaseId: xapiBackfills.leaseId,
  leaseUntil: xapiBackfills.leaseUntil,
  active: () => isActive(),
};

export async function enqueueBackfill(ctx: ServiceContext, message: BackfillMessage): Promise<void> {
  await sendMessage(ctx, ctx.env.XAPI_BACKFILL_QUEUE, message);
}

export async function findBackfill(ctx: ServiceContext, id: string): Promise<Backfill | null> {
  return (await ctx.db.select().from(xapiBackfills).where(eq(xapiBackfills.id, id)).get()) ?? null;
}

/**
 * Takes the back-fill for this invocation if it is active, at the message's generation, and nobody
 * holds it: `running`, the lease `leaseId`'s. Returns it, or null.
 */
export async function claimBackfill(
  ctx: ServiceContext,
  input: { message: BackfillMessage; leaseId: string },
): Promise<Backfill | null> {
  const { message, leaseId } = input;
  const now = ctx.now();
  const [job] = await ctx.db
    .update(xapiBackfills)
    .set({ status: "running", ...taken(leaseId, now), heartbeatAt: now })
    .where(
      and(
        eq(xapiBackfills.id, message.backfill_id),
        isActive(),
        eq(xapiBackfills.generation, message.generation),
        claimable(LEASE, now),
      ),
    )
    .returning();
  return job ?? null;
}

const held = (job: Pick<Backfill, "id" | "generation">, leaseId: string) =>
  and(
    eq(xapiBackfills.id, job.id),
    heldBy(LEASE, leaseId),
    eq(xapiBackfills.generation, job.generation),
    eq(xapiBackfills.status, "running"),
  );

/**
 * Records a chunk that offered facts: the cursor after it and the statements it made, the lease
 * renewed. False: the lease was lost (another holder or the sweep took the job, or it ended).
 */
export async function saveCheckpoint(
  ctx: ServiceContext,
  input: { job: Backfill; leaseId: string; cursor: BackfillCursor; statements: number },
): Promise<boolean> {
  const { job, leaseId, cursor, statements } = input;
  const now = ctx.now();
  const result = await ctx.db
    .update(xapiBackfills)
    .set({
      cursor: cursor as unknown as Record<string, unknown>,
      statementsQueued: sql`${xapiBackfills.statementsQueued} + ${statements}`,
      ...renewed(now),
      heartbeatAt: now,
    })
    .where(held(job, leaseId))
    .run();
  return result.meta.changes === 1;
}

/** `completed`, if this lease still holds the job. */
export async function markCompleted(
  ctx: ServiceContext,
  input: { job: Backfill; leaseId: string },
): Promise<boolean> {
  const now = ctx.now();
  const result = await ctx.db
    .update(xapiBackfills)
    .set({ status: "completed", completedAt: nowIso(now), heartbeatAt: now, leaseId: null, leaseUntil: null })
    .where(held(input.job, input.leaseId))
    .run();
  return result.meta.changes === 1;
}

/**
 * `failed` with `reason`: by its holder (`leaseId`), or, without one, only if the job is still at
 * `generation` and nobody holds it (the dead-letter consumer, the sweep). True if it changed.
 */
export async function markFailed(
  ctx: ServiceContext,
  input: { jobId: string; reason: string } & ({ leaseId: string } | { generation: number }),
): Promise<boolean> {
  const now = ctx.now();
  const guard =
    "leaseId" in input
      ? heldBy(LEASE, input.leaseId)
      : and(eq(xapiBackfills.generation, input.generation), claimable(LEASE, now));
  const result = await ctx.db
    .update(xapiBackfills)
    .set({
      status: "failed",
      error: input.reason,
      completedAt: nowIso(now),
      heartbeatAt: now,
      leaseId: null,
      leaseUntil: null,
    })
    .where(and(eq(xapiBackfills.id, input.jobId), isActive(), guard))
    .run();
  return result.meta.changes === 1;
}

/** Gives the job back after an error to the message's retry, due in `retryInMs`. */
export async function releaseLease(
  ctx: ServiceContext,
  input: { jobId: string; leaseId: string; retryInMs: number },
): Promise<void> {
  await ctx.db
    .update(xapiBackfills)
    .set(awaitingMessage(ctx.now(), input.retryInMs))
    .where(and(eq(xapiBackfills.id, input.jobId), heldBy(LEASE, input.leaseId)))
    .run();
}
