import type { z } from "zod";
import type { Env } from "../../env";
import type { Statement } from "../batch";
import { queueDelaySeconds, sendAll } from "../queue";
import type { ServiceContext } from "../service/context";
import type { Attempt, Closed } from "./recorder";

/** What a target is to the delivery engine (engine.ts), and the messages of its queue. */

/**
 * The state columns every delivery table has, as plain SQL reads them: `status` ('pending',
 * 'retrying', 'succeeded', 'failed'), `attempt_count`, `claimed_until` and `next_attempt_at` (ms).
 */
export interface WorkState {
  id: string;
  status: string;
  claimed_until: number | null;
  next_attempt_at: number | null;
}

/** What an attempt came to: delivered, tried again after `retryInSeconds`, or given up. */
export interface Verdict {
  status: "succeeded" | "retrying" | "failed";
  retryInSeconds?: number | null;
}

/** A claimed row and the number of the attempt its claim counted (1-based). */
export interface ClaimedRow<Row> {
  row: Row;
  attempt: number;
}

/**
 * One kind of delivery. The engine owns the claim, the pool, the recording, the queue's acks and
 * retries and the dead letters; the target says what its work is and how one attempt goes.
 */
export interface DeliveryTarget<
  Body,
  Row extends WorkState,
  Item extends { id: string },
  Result extends Verdict,
> {
  /** For the log. */
  name: string;
  /** The work's table: `id`, `status`, `attempt_count`, `claimed_until`, `next_attempt_at`, `last_error`, `completed_at`. */
  table: string;
  /** The queue message: one id of `table`. */
  message: { schema: z.ZodType<Body>; idOf(body: Body): string; of(id: string): Body };
  /** The target's queue and dead-letter queue, from the invocation's bindings. */
  queue(env: Env): Queue<unknown>;
  deadLetter(env: Env): Queue<unknown>;
  /** `last_error` of work whose message the queue dead-lettered. */
  deadLetteredError: string;
  /** How long the claim of `count` items holds: longer than sending them all can take. */
  leaseMs(ctx: ServiceContext, count: number): number;
  /**
   * What sending the work needs, read in the claim's own D1 batch (one round trip): a statement over
   * the ids (a JSON array bound as ?1) whose rows carry the `WorkState` columns. Without it the engine
   * reads the state columns alone, and `prepare` reads the rest.
   */
  load?(d1: D1Database, idsJson: string): D1PreparedStatement;
  /** The claimed rows as items to send, and the statements closing those that will not be sent. */
  prepare(
    ctx: ServiceContext,
    claimed: ClaimedRow<Row>[],
    now: number,
  ): Promise<{ send: Item[]; close: Closed[] }> | { send: Item[]; close: Closed[] };
  /**
   * One attempt: the request built (signed, authorised), sent through the outbound gate and judged
   * (the retry delay from platform/outbound/retry.ts's policy). Writes nothing; should never throw.
   */
  send(ctx: ServiceContext, item: Item): Promise<Result>;
  /**
   * The writes that record answered attempts: the log, each item's new state (only while the claim
   * is still this attempt's: `attempt_count` unchanged), and anything the target keeps (health).
   */
  record(ctx: ServiceContext, attempts: Attempt<Item, Result>[], now: number): Statement[];
}

// biome-ignore lint/suspicious/noExplicitAny: a registry of targets of any shape
export type AnyTarget = DeliveryTarget<any, any, any, any>;

/** A delay as the queue takes it (whole seconds, up to 12 hours): the one for every retry. */
export function retryDelay(seconds: number): number {
  return queueDelaySeconds(seconds);
}

/** Sends one message per id to the target's queue; `delaySeconds[i]`, when given, delays the i-th. */
export async function enqueue<Body>(
  ctx: ServiceContext,
  target: Pick<DeliveryTarget<Body, WorkState, { id: string }, Verdict>, "queue" | "message">,
  ids: readonly string[],
  delaySeconds?: readonly number[],
): Promise<void> {
  await sendAll(
    ctx,
    target.queue(ctx.env),
    ids.map((id) => target.message.of(id)),
    delaySeconds,
  );
}
