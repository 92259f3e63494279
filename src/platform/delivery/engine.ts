import { nowIso } from "../ids";
import { dueLapsedBefore } from "../jobs/lease";
import type { ServiceContext } from "../service/context";
import { groupById, parseBatch } from "./messages";
import { sendAndRecord } from "./send";
import { claimSql, deadLetterSql, lostSql, stateSql } from "./sql";
import {
  type AnyTarget,
  type ClaimedRow,
  type DeliveryTarget,
  enqueue,
  retryDelay,
  type Verdict,
  type WorkState,
} from "./target";

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
