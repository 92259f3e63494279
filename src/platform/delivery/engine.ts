import type { z } from "zod";
import type { Env } from "../../env";
import type { Statement } from "../batch";
import { nowIso } from "../ids";
import { dueLapsedBefore } from "../jobs/lease";
import { queueDelaySeconds, sendAll } from "../queue";
import type { ServiceContext } from "../service/context";
import { groupById, parseBatch } from "./messages";
import { inPool, PARALLEL_SENDS } from "./pool";
import { type Attempt, type Closed, recorder } from "./recorder";

export type { Attempt, Closed } from "./recorder";

/**
 * The delivery engine: work a customer's system must receive (a webhook delivery, an LTI score, an
 * xAPI statement) is claimed in D1, sent through the outbound gate at most six at a time, each
 * attempt recorded as soon as it is answered, retried with one policy (platform/outbound/retry.ts) by
 * handing its message back to the queue with a delay, and closed as failed when the queue dead-letters
 * it. A target is an adapter (`DeliveryTarget`): what to read, how to send, what to write. See
 * docs/design/delivery-engine.md.
 */

/** Queues may hand a message over a little before its delay is up. */
const EARLY_SLACK_MS = 2_000;
/** A send that threw (a bug, not an answer) is handed back to the queue after this long. */
const AFTER_ERROR_SECONDS = 30;

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

const claimSql = (table: string) =>
  `UPDATE ${table} SET claimed_until = ?1, attempt_count = attempt_count + 1
  WHERE id IN (SELECT value FROM json_each(?2)) AND status IN ('pending', 'retrying')
    AND (claimed_until IS NULL OR claimed_until < ?3) AND (next_attempt_at IS NULL OR next_attempt_at <= ?4)
  RETURNING id, attempt_count AS attempt`;
const stateSql = (table: string) =>
  `SELECT id, status, claimed_until, next_attempt_at FROM ${table} WHERE id IN (SELECT value FROM json_each(?1))`;
const deadLetterSql = (table: string) =>
  `UPDATE ${table} SET status = 'failed', claimed_until = NULL, last_error = ?1, completed_at = ?2
  WHERE id IN (SELECT value FROM json_each(?3)) AND status IN ('pending', 'retrying')`;

/**
 * Work whose message was lost (platform/jobs/lease.ts): open, no attempt holding it (its claim is the
 * attempt's lease), and due (`next_attempt_at`, or since it was created) more than the grace ago. Its
 * due time is moved to now (so concurrent sweeps take it once) and its ids returned.
 */
const lostSql = (table: string) =>
  `UPDATE ${table} SET next_attempt_at = ?1 WHERE id IN (SELECT id FROM ${table}
    WHERE status IN ('pending', 'retrying') AND (claimed_until IS NULL OR claimed_until < ?1)
      AND (next_attempt_at < ?2 OR (next_attempt_at IS NULL AND created_at < ?3)) LIMIT ?4)
  RETURNING id`;

/** How many lost items one sweep re-queues per target. */
const SWEEP_LIMIT = 1_000;

/**
 * The minute sweep's safety net under a target's queue: work whose message was lost (a failed send,
 * a crash before the message was settled, a message the queue dropped) gets a new message, within
 * about a minute of its lease or due time running out (`MESSAGE_GRACE_MS`). Work that merely waits for
 * a delayed retry is left alone until that retry is due; the claim makes a message sent needlessly
 * harmless. Returns how many were re-queued.
 */
export async function requeueLost(
  ctx: ServiceContext,
  target: Pick<DeliveryTarget<unknown, WorkState, { id: string }, Verdict>, "table" | "queue" | "message">,
): Promise<number> {
  const now = ctx.now();
  const before = dueLapsedBefore(now);
  const { results } = await ctx.d1
    .prepare(lostSql(target.table))
    .bind(now, before, nowIso(before), SWEEP_LIMIT)
    .all<{ id: string }>();
  const ids = results.map((r) => r.id);
  if (ids.length > 0) await enqueue(ctx, target, ids);
  return ids.length;
}

/**
 * Claims the ids and reads them, in one round trip: an attempt is made only on work that is still
 * open, due, and not claimed by a twin message; the claim counts the attempt. Safe under concurrent
 * consumers: the conditional UPDATE returns only the rows it changed.
 */
async function claim<Row extends WorkState>(
  d1: D1Database,
  target: AnyTarget,
  ids: string[],
  now: number,
  leaseMs: number,
) {
  const list = JSON.stringify(ids);
  const read = target.load ? target.load(d1, list) : d1.prepare(stateSql(target.table)).bind(list);
  const [claimed, rows] = await d1.batch<unknown>([
    d1.prepare(claimSql(target.table)).bind(now + leaseMs, list, now, now + EARLY_SLACK_MS),
    read,
  ]);
  const claimedRows = (claimed?.results ?? []) as { id: string; attempt: number }[];
  const readRows = (rows?.results ?? []) as Row[];
  return {
    claimed: new Map(claimedRows.map((c) => [c.id, c.attempt])),
    rows: new Map(readRows.map((r) => [r.id, r])),
  };
}

/** What to do with a message: acknowledge it, or hand it back after a delay. */
type Settlement = { retryInSeconds?: number };

/** Work this batch did not claim: finished (acknowledge), or someone else's turn (wait for it). */
function waitFor(row: WorkState, now: number): Settlement {
  if (row.status === "succeeded" || row.status === "failed") return {};
  if (row.claimed_until && row.claimed_until >= now)
    return { retryInSeconds: (row.claimed_until - now) / 1000 + 1 };
  return { retryInSeconds: ((row.next_attempt_at ?? now) - now) / 1000 };
}

export interface SendOptions<Item, Result> {
  /** Claimed work closed unsent, written with the first attempts (or alone). */
  closed?: Closed[];
  onClosed?: (id: string) => void;
  /** After this time no further send starts: the items left are returned as `released`. */
  deadline?: number;
  /** An attempt's record is written. */
  onRecorded: (item: Item, result: Result) => void;
  /** A send threw; without this handler the first such error is thrown once the rest are recorded. */
  onError?: (item: Item, error: unknown) => void;
}

/**
 * Sends claimed items through the target, at most six at a time, recording each attempt as soon as it
 * is answered (never at the end of the batch: a crash re-sends at most what was in flight or answered
 * in the last `RECORD_WINDOW_MS`). When a record cannot be written, no further send starts, and the
 * error is thrown once the sends in flight are answered.
 */
export async function sendAndRecord<Item extends { id: string }, Result extends Verdict>(
  ctx: ServiceContext,
  target: Pick<DeliveryTarget<unknown, WorkState, Item, Result>, "name" | "send" | "record">,
  items: Item[],
  options: SendOptions<Item, Result>,
): Promise<{ attempts: Attempt<Item, Result>[]; released: Item[] }> {
  const log = recorder<Item, Result>(
    ctx.db,
    () => ctx.now(),
    (attempts, now) => (attempts.length > 0 ? target.record(ctx, attempts, now) : []),
  );
  for (const closed of options.closed ?? [])
    log.add({ closed, written: () => options.onClosed?.(closed.id) });
  const attempts: Attempt<Item, Result>[] = [];
  const released: Item[] = [];
  let thrown: { error: unknown } | null = null;
  await inPool(items, PARALLEL_SENDS, async (item) => {
    if (log.failed || (options.deadline !== undefined && ctx.now() >= options.deadline)) {
      released.push(item);
      return;
    }
    let result: Result;
    try {
      result = await target.send(ctx, item);
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          message: "delivery attempt threw",
          target: target.name,
          id: item.id,
          error: String(error),
        }),
      );
      if (options.onError) options.onError(item, error);
      else thrown ??= { error };
      return;
    }
    const attempt = { item, result };
    attempts.push(attempt);
    log.add({ attempt, written: () => options.onRecorded(item, result) });
  });
  await log.done();
  if (thrown) throw (thrown as { error: unknown }).error;
  return { attempts, released };
}

/** Un-claims first attempts the deadline stopped before they were sent (still attempt 1, that claim). */
const releaseSql = (table: string) =>
  `UPDATE ${table} SET attempt_count = 0, claimed_until = NULL
  WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'pending' AND attempt_count = 1 AND claimed_until = ?2`;

/**
 * A fan-out's first attempts, made where the work is created (the webhooks' fan-out, the xAPI
 * subscriber's offer): the rows were inserted already claimed (attempt 1, until `lease`) in the commit
 * that made them, so no consumer takes them meanwhile. They are sent and recorded as
 * `sendAndRecord` does until `deadline`; the ones the deadline (or a failed record) stopped before
 * their send are un-claimed; then one message each goes to the target's queue for what is still
 * open: those un-claimed and `queue` (work the caller did not claim) at once, the retries with their
 * delay. A send that throws is thrown once the rest are recorded, before anything is queued: the
 * invocation fails as if it had crashed, and its claims lapse into the minute sweep's `requeueLost`.
 */
export async function sendFirstAttempts<Item extends { id: string }, Result extends Verdict>(
  ctx: ServiceContext,
  target: Pick<
    DeliveryTarget<unknown, WorkState, Item, Result>,
    "name" | "table" | "queue" | "message" | "send" | "record"
  >,
  items: Item[],
  options: { deadline: number; lease: number; queue?: readonly string[] },
): Promise<{ attempts: Attempt<Item, Result>[]; released: Item[] }> {
  const sent = await sendAndRecord(ctx, target, items, { deadline: options.deadline, onRecorded: () => {} });
  const released = sent.released.map((item) => item.id);
  if (released.length > 0)
    await ctx.d1.prepare(releaseSql(target.table)).bind(JSON.stringify(released), options.lease).run();
  const retries = sent.attempts.filter((a) => a.result.status === "retrying");
  const now = [...(options.queue ?? []), ...released];
  await enqueue(
    ctx,
    target,
    [...now, ...retries.map((r) => r.item.id)],
    [...now.map(() => 0), ...retries.map((r) => retryDelay(r.result.retryInSeconds ?? 0))],
  );
  return sent;
}

/**
 * A delivery queue's consumer: parse the batch (what does not fit is dead-lettered), claim, send, and
 * settle each message as soon as its attempt is recorded — acknowledged, or handed back to the queue
 * with the retry's delay. A message of finished work is acknowledged without a request, so
 * at-least-once delivery of messages never means a second send.
 */
export async function deliverBatch<
  Body,
  Row extends WorkState,
  Item extends { id: string },
  Result extends Verdict,
>(
  ctx: ServiceContext,
  target: DeliveryTarget<Body, Row, Item, Result>,
  batch: MessageBatch<unknown>,
): Promise<void> {
  const parsed = await parseBatch(batch, target.message.schema, target.deadLetter(ctx.env));
  const byId = groupById(parsed, (body) => target.message.idOf(body));
  if (byId.size === 0) return;
  const settle = (id: string, how: Settlement) => {
    for (const message of byId.get(id) ?? []) {
      if (how.retryInSeconds === undefined) message.ack();
      else message.retry({ delaySeconds: retryDelay(how.retryInSeconds) });
    }
  };
  const now = ctx.now();
  const ids = [...byId.keys()];
  const found = await claim<Row>(ctx.d1, target as AnyTarget, ids, now, target.leaseMs(ctx, ids.length));
  const claimed: ClaimedRow<Row>[] = [];
  for (const id of ids) {
    const row = found.rows.get(id);
    const attempt = found.claimed.get(id);
    if (!row)
      settle(id, {}); // deleted (with its webhook, launch, …)
    else if (attempt === undefined) settle(id, waitFor(row, now));
    else claimed.push({ row, attempt });
  }
  if (claimed.length === 0) return;
  const prepared = await target.prepare(ctx, claimed, now);
  // Left unsettled when a record cannot be written: the error fails the invocation, and the queue
  // hands those messages over again (their claims keep a twin from sending before they lapse).
  await sendAndRecord(ctx, target, prepared.send, {
    closed: prepared.close,
    onClosed: (id) => settle(id, {}),
    onRecorded: (item, result) =>
      settle(item.id, result.status === "retrying" ? { retryInSeconds: result.retryInSeconds ?? 0 } : {}),
    onError: (item) => settle(item.id, { retryInSeconds: AFTER_ERROR_SECONDS }),
  });
}

/**
 * A delivery dead-letter queue's consumer: the work whose messages exhausted the queue's own retries
 * is closed as failed, visibly, and every message acknowledged (one that does not fit is logged).
 */
export async function deadLetterBatch<Body>(
  ctx: ServiceContext,
  target: Pick<
    DeliveryTarget<Body, WorkState, { id: string }, Verdict>,
    "table" | "message" | "deadLetteredError"
  >,
  batch: MessageBatch<unknown>,
): Promise<void> {
  const parsed = await parseBatch(batch, target.message.schema);
  const ids = [...new Set(parsed.map((p) => target.message.idOf(p.body)))];
  if (ids.length > 0)
    await ctx.d1
      .prepare(deadLetterSql(target.table))
      .bind(target.deadLetteredError, nowIso(ctx.now()), JSON.stringify(ids))
      .run();
  for (const { message } of parsed) message.ack();
}
