import { and, eq, isNull, lt, or, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { ServiceContext } from "../service/context";

/**
 * Leases of queued work: how every job a queue carries (an export, a bulk upload, a webhook delivery,
 * a grade passback) tells the minute sweep whether anybody still accounts for it. See
 * docs/design/job-leases.md.
 *
 * A job is accounted for in one of two ways, and `lease_until` (ms since the epoch) says until when:
 * - **held**: an invocation works on it (`lease_id` is the holder's) and renews the lease at each
 *   step (a chunk, a part); past `lease_until` the holder is presumed dead;
 * - **awaiting a message**: nobody holds it (`lease_id` null) and a queue message is on its way, due
 *   at some instant; `lease_until` is that instant plus `MESSAGE_GRACE_MS`, so that a message merely
 *   waiting out a long delay is never taken for lost.
 *
 * Past `lease_until`, in either state, the job is lost: the sweep takes it (conditionally, so that
 * concurrent sweeps re-send once) and sends it a new message. Every write of a holder is conditional
 * on its `lease_id` (and the job's generation), so a holder presumed dead that wakes up writes nothing.
 *
 * The delivery tables keep the same two facts in their own columns: `claimed_until` (the attempt's
 * lease, its holder fenced by `attempt_count`) and `next_attempt_at` (the message's due time), and
 * the delivery engine's sweep applies `MESSAGE_GRACE_MS` to the due time the same way.
 */

/** How long a holder's lease lasts from its last renewal (every chunk, part or attempt renews it). */
export const LEASE_MS = 90_000;

/**
 * How late past its due time a queue message may still be handed over before the work it carries
 * counts as lost (queues deliver a little late under load; the sweep runs once a minute).
 */
export const MESSAGE_GRACE_MS = 60_000;

/** The two lease columns of a job table. */
export interface LeaseColumns {
  leaseId: SQLiteColumn;
  leaseUntil: SQLiteColumn;
}

/** Values that make `leaseId` the holder until `LEASE_MS` from `now`. */
export function taken(leaseId: string, now: number): { leaseId: string; leaseUntil: number } {
  return { leaseId, leaseUntil: now + LEASE_MS };
}

/** Values that renew a holder's lease (the caller's WHERE has `heldBy`). */
export function renewed(now: number): { leaseUntil: number } {
  return { leaseUntil: now + LEASE_MS };
}

/**
 * Values that give the job to a queue message due `dueInMs` from `now` (0: sent now): nobody holds
 * it, and it counts as lost if that message has not taken it by the due time plus the grace.
 */
export function awaitingMessage(now: number, dueInMs = 0): { leaseId: null; leaseUntil: number } {
  return { leaseId: null, leaseUntil: now + Math.max(0, dueInMs) + MESSAGE_GRACE_MS };
}

/** The job is held by `leaseId`. */
export function heldBy(columns: LeaseColumns, leaseId: string): SQL {
  return eq(columns.leaseId, leaseId) as SQL;
}

/**
 * A message may take the job: nobody holds it (it awaits a message: any of its messages may take
 * it), or its holder's lease ran out.
 */
export function claimable(columns: LeaseColumns, now: number): SQL {
  return or(isNull(columns.leaseId), isNull(columns.leaseUntil), lt(columns.leaseUntil, now)) as SQL;
}

/**
 * The sweep's predicate: nobody accounts for the job any more at `now` (a holder's lease ran out, or
 * the message it awaited is past its due time and the grace; a job that never had a lease too).
 * Callers add "the job is still active".
 */
export function expired(columns: LeaseColumns, now: number): SQL {
  return or(isNull(columns.leaseUntil), lt(columns.leaseUntil, now)) as SQL;
}

/** A holder's lease is live at `now` (a message that finds it so waits until `leaseUntil`). */
export function isHeld(lease: { leaseId: string | null; leaseUntil: number | null }, now: number): boolean {
  return lease.leaseId !== null && lease.leaseUntil !== null && lease.leaseUntil >= now;
}

/**
 * Work queued for a due time (the delivery tables: `next_attempt_at`, null meaning "at once, since it
 * was created") is lost when its due time is this long ago and no attempt holds it.
 */
export function dueLapsedBefore(now: number): number {
  return now - MESSAGE_GRACE_MS;
}

/**
 * A table of queued jobs that pass from message to message (exports, bulk uploads): its lease
 * columns, the columns every such job has under the same names (`id`, `generation`, `heartbeatAt`),
 * and what "still running" means for it.
 */
export interface LeasedJobs extends LeaseColumns {
  table: SQLiteTable;
  id: SQLiteColumn;
  generation: SQLiteColumn;
  active: () => SQL;
}

/** The job as a message names it. */
interface JobAtGeneration {
  id: string;
  generation: number;
}

/**
 * The holder passes the job on to the next message (sent now): generation + 1, nobody holds it until
 * that message takes it. False if the holder lost the job meanwhile.
 */
export async function handOver(
  ctx: ServiceContext,
  jobs: LeasedJobs,
  input: { job: JobAtGeneration; leaseId: string },
): Promise<boolean> {
  const { job, leaseId } = input;
  const now = ctx.now();
  const result = await ctx.db
    .update(jobs.table)
    .set({ generation: job.generation + 1, ...awaitingMessage(now), heartbeatAt: now })
    .where(
      and(eq(jobs.id, job.id), heldBy(jobs, leaseId), eq(jobs.generation, job.generation), jobs.active()),
    )
    .run();
  return result.meta.changes === 1;
}

/**
 * Undoes a hand-over whose message could not be sent, so that the current message, retried, can take
 * the job again. Nobody else can have taken it meanwhile: no message of the new generation exists.
 */
export async function revertHandOver(
  ctx: ServiceContext,
  jobs: LeasedJobs,
  job: JobAtGeneration,
): Promise<void> {
  await ctx.db
    .update(jobs.table)
    .set({ generation: job.generation })
    .where(and(eq(jobs.id, job.id), eq(jobs.generation, job.generation + 1), isNull(jobs.leaseId)))
    .run();
}

/**
 * The sweep takes a lost job (its lease ran out) for a new message of its current generation;
 * conditionally, so that concurrent sweeps send one message, and a holder presumed dead loses the job
 * with it (its later writes change nothing). True: send that message.
 */
export async function takeLost(
  ctx: ServiceContext,
  jobs: LeasedJobs,
  job: JobAtGeneration,
): Promise<boolean> {
  const now = ctx.now();
  const result = await ctx.db
    .update(jobs.table)
    .set({ ...awaitingMessage(now), heartbeatAt: now })
    .where(and(eq(jobs.id, job.id), jobs.active(), eq(jobs.generation, job.generation), expired(jobs, now)))
    .run();
  return result.meta.changes === 1;
}
