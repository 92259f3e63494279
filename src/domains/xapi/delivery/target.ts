import { and, eq, inArray, sql } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import { xapiBatches, xapiEndpoints } from "../../../db/schema";
import type { Statement } from "../../../platform/batch";
import { inJsonList } from "../../../platform/db";
import {
  type Closed,
  type DeliveryTarget,
  enqueue,
  PARALLEL_SENDS,
  type Verdict,
  type WorkState,
} from "../../../platform/delivery";
import { nowIso } from "../../../platform/ids";
import { nextRetrySeconds } from "../../../platform/outbound";
import type { ServiceContext } from "../../../platform/service/context";
import { type EndpointRow, lrsRequest } from "../lrs-client";
import { type Exchange, exchange, type PendingStatement } from "./exchange";
import {
  failPendingQuery,
  ownStateQuery,
  pendingOfOwnStateBatchesQuery,
  recordStatementsQueries,
  type StatementOutcome,
} from "./sql";

/**
 * xAPI statements as a target of the delivery engine (platform/delivery): a batch of up to 50
 * statements of one endpoint, read with its endpoint (credentials and version as they are at the
 * time of the attempt), POSTed to the LRS and, as its answers demand, isolated or split
 * (exchange.ts), recorded on each statement, the batch and the endpoint's health.
 */

/** A message of the xAPI queue: one batch to attempt. */
export const XapiBatchMessage = z.object({ batch_id: z.string().min(1) });
export type XapiBatchMessage = z.infer<typeof XapiBatchMessage>;

/** Statements per batch: one POST carries at most this many. */
export const BATCH_SIZE = 50;

/** An attempt starts no further request after this many time-outs (it isolates or splits meanwhile). */
const BUDGET_TIMEOUTS = 3;

export const ENDPOINT_DISABLED = "endpoint disabled";

export interface BatchItem {
  id: string;
  /** The attempt's number (1-based), as the claim counted it. */
  attempt: number;
  endpoint: EndpointRow;
  statements: PendingStatement[];
  /**
   * Its statements share its state (`log_status`), all of them in `statements`: an attempt whose
   * outcomes are alike for all of them is recorded on the batch alone.
   */
  shared: boolean;
}

export interface BatchResult extends Verdict {
  exchange: Exchange;
  /** The continuation of an attempt that ran out of time after settling some: not counted as one. */
  continuation: boolean;
  /** The error the statements still pending keep (and, when the batch failed, fail with). */
  error: string | null;
}

/** How long an attempt keeps starting requests: its whole duration is at most this and one time-out. */
function budgetMs(ctx: ServiceContext): number {
  return BUDGET_TIMEOUTS * ctx.config.webhooks.timeoutMs;
}

/** The longest one attempt of a batch can take: its budget and the time-out of its last request. */
export function attemptLongestMs(ctx: ServiceContext): number {
  return budgetMs(ctx) + ctx.config.webhooks.timeoutMs;
}

/** One attempt of a batch: its pending statements through `lrsRequest`, judged into the batch's verdict. */
export async function attemptBatch(
  ctx: ServiceContext,
  item: BatchItem,
  random: () => number = Math.random,
): Promise<BatchResult> {
  const ex = await exchange(
    item.statements,
    (body) => lrsRequest(ctx, item.endpoint, { method: "POST", path: "statements", body }),
    ctx.now() + budgetMs(ctx),
    () => ctx.now(),
  );
  const left = item.statements.filter((s) => !ex.settled.has(s.id)).length;
  if (left === 0) return { status: "succeeded", exchange: ex, continuation: false, error: null };
  if (ex.stop || ex.settled.size === 0) {
    // An answer stopped the attempt (or, which the budget should never allow, it ran out of time
    // having settled nothing): the retry schedule decides.
    const error = ex.stop?.error ?? "Ran out of time before the LRS settled any statement";
    const delay = nextRetrySeconds(
      item.attempt,
      ctx.config.webhooks.retrySchedule,
      ex.stop?.result.headers?.get("Retry-After") ?? null,
      ctx.now(),
      random,
    );
    return delay === null
      ? { status: "failed", exchange: ex, continuation: false, error }
      : { status: "retrying", retryInSeconds: delay, exchange: ex, continuation: false, error };
  }
  // Out of time with statements left after settling some: carry on at once, uncounted.
  return { status: "retrying", retryInSeconds: 0, exchange: ex, continuation: true, error: null };
}

/** The statements recording one answered attempt: each statement, the batch, the endpoint's health. */
export function recordAttempt(ctx: ServiceContext, item: BatchItem, result: BatchResult, now: number) {
  const at = nowIso(now);
  const ex = result.exchange;
  const outcomes = item.statements.map((s): StatementOutcome => {
    const settled = ex.settled.get(s.id);
    const status = settled?.status ?? (result.status === "failed" ? "failed" : null);
    const error = settled ? (settled.status === "failed" ? settled.error : null) : result.error;
    return { id: s.id, carried: ex.carried.get(s.id) ?? 0, status, error };
  });
  // One write for the whole batch when its statements share its state and this attempt came to the
  // same for each of them, short of failing them (a failed statement always has a row of its own:
  // the back-fill and the health read failures there); otherwise each statement its own.
  const first = outcomes[0];
  const alike =
    item.shared &&
    first !== undefined &&
    first.status !== "failed" &&
    outcomes.every(
      (o) => o.status === first.status && o.carried === first.carried && o.error === first.error,
    );
  const log =
    alike && first && first.status !== "failed"
      ? {
          logStatus: first.status ?? ("pending" as const),
          logAttempts: sql`${xapiBatches.logAttempts} + ${first.carried}`,
          ...(first.status === "sent"
            ? { logError: null }
            : first.error !== null
              ? { logError: first.error }
              : {}),
        }
      : { logStatus: null };
  const statements: Statement[] = [
    ...(alike
      ? []
      : [
          ownStateQuery(ctx.db, item.id, item.attempt),
          ...recordStatementsQueries(ctx.db, item.id, item.attempt, outcomes, at),
        ]),
    ctx.db
      .update(xapiBatches)
      .set({
        ...log,
        status: result.status,
        claimedUntil: null,
        attemptCount: result.continuation ? item.attempt - 1 : item.attempt,
        nextAttemptAt: result.status === "retrying" ? now + (result.retryInSeconds ?? 0) * 1000 : null,
        lastResponseStatus: ex.lastStatus,
        lastError: result.error ?? ex.rejection,
        lastErrorCode: ex.stop?.result.errorCode ?? null,
        completedAt: result.status === "retrying" ? null : at,
        // Finished: nothing of it is sent again (a back-fill rebuilds a statement from its fact).
        ...(result.status === "retrying" ? {} : { bodies: null }),
      })
      .where(and(eq(xapiBatches.id, item.id), eq(xapiBatches.attemptCount, item.attempt))),
  ];
  const health = healthChanges(ex, at);
  if (health)
    statements.push(ctx.db.update(xapiEndpoints).set(health).where(eq(xapiEndpoints.id, item.endpoint.id)));
  return statements;
}

/**
 * The endpoint's health after an attempt: a success clears the failing run, a failure (an answer that
 * stopped the attempt) starts one if none is running; a rejected statement is the last error but no
 * failure of the endpoint.
 */
function healthChanges(ex: Exchange, at: string): SQLiteUpdateSetSource<typeof xapiEndpoints> | null {
  if (ex.requests === 0) return null;
  const changes: SQLiteUpdateSetSource<typeof xapiEndpoints> = {};
  if (ex.accepted) Object.assign(changes, { lastSuccessAt: at, failingSince: null });
  const error = ex.stop?.error ?? ex.rejection;
  if (error) Object.assign(changes, { lastErrorAt: at, lastError: error });
  if (ex.stop) changes.failingSince = ex.accepted ? at : sql`coalesce(${xapiEndpoints.failingSince}, ${at})`;
  return Object.keys(changes).length > 0 ? changes : null;
}

/** A claimed batch that will not be sent (its endpoint is switched off): it and its statements closed. */
function closeDisabled(ctx: ServiceContext, id: string, attempt: number, now: number): Closed {
  const at = nowIso(now);
  return {
    id,
    statements: [
      failPendingQuery(ctx.db, id, attempt, ENDPOINT_DISABLED, at),
      ctx.db
        .update(xapiBatches)
        .set({
          status: "failed",
          logStatus: null,
          claimedUntil: null,
          lastError: ENDPOINT_DISABLED,
          completedAt: at,
          bodies: null,
          attemptCount: attempt - 1,
        })
        .where(and(eq(xapiBatches.id, id), eq(xapiBatches.attemptCount, attempt))),
    ],
  };
}

/** A batch's bodies (the JSON array of its statements as built) by statement id, each as JSON text. */
function statementBodies(json: string | null): Map<string, string> {
  const bodies = new Map<string, string>();
  if (json === null) return bodies;
  for (const statement of JSON.parse(json) as { id: string }[])
    bodies.set(statement.id, JSON.stringify(statement));
  return bodies;
}

export const xapiTarget: DeliveryTarget<XapiBatchMessage, WorkState, BatchItem, BatchResult> = {
  name: "xapi",
  table: "xapi_batches",
  message: {
    schema: XapiBatchMessage,
    idOf: (body) => body.batch_id,
    of: (id) => ({ batch_id: id }),
  },
  queue: (env) => env.XAPI_QUEUE,
  deadLetter: (env) => env.XAPI_DLQ,
  deadLetteredError: "Dead-lettered: the xAPI queue gave up on this batch",
  leaseMs: (ctx, count) => (Math.ceil(count / PARALLEL_SENDS) + 1) * attemptLongestMs(ctx) + 30_000,
  // The claimed batches with their endpoints (credentials as they are now: a change applies to the
  // very next attempt), their bodies and the ids of their pending statements: one round trip. An
  // attempt sends the bodies of the pending statements only, in the order they happened.
  async prepare(ctx, claimed, now) {
    const ids = claimed.map((c) => c.row.id);
    // Three reads rather than a join: D1's batch answers rows as objects, where the two tables'
    // `id` columns would collide.
    const [batches, endpointRows, own] = await ctx.db.batch([
      ctx.db
        .select({
          id: xapiBatches.id,
          endpointId: xapiBatches.endpointId,
          bodies: xapiBatches.bodies,
          statementIds: xapiBatches.statementIds,
          logStatus: xapiBatches.logStatus,
        })
        .from(xapiBatches)
        .where(inJsonList(xapiBatches.id, ids)),
      ctx.db
        .select()
        .from(xapiEndpoints)
        .where(
          inArray(
            xapiEndpoints.id,
            ctx.db
              .select({ id: xapiBatches.endpointId })
              .from(xapiBatches)
              .where(inJsonList(xapiBatches.id, ids)),
          ),
        ),
      pendingOfOwnStateBatchesQuery(ctx.db, ids),
    ]);
    const byId = new Map(endpointRows.map((e) => [e.id, e]));
    const endpoints = new Map(batches.map((b) => [b.id, byId.get(b.endpointId)]));
    // Pending: all the statements of a batch whose statements share its pending state (in the order
    // they happened, as stored), the pending rows of one whose statements hold their own.
    const pendingIds = new Map<string, string[]>();
    const shared = new Set<string>();
    for (const b of batches)
      if (b.logStatus === "pending") {
        pendingIds.set(b.id, JSON.parse(b.statementIds) as string[]);
        shared.add(b.id);
      }
    for (const s of own) {
      if (!s.batchId) continue;
      const list = pendingIds.get(s.batchId);
      if (list) list.push(s.id);
      else pendingIds.set(s.batchId, [s.id]);
    }
    const statements = new Map<string, PendingStatement[]>();
    for (const b of batches) {
      const bodies = statementBodies(b.bodies);
      const list: PendingStatement[] = [];
      for (const id of pendingIds.get(b.id) ?? []) {
        const body = bodies.get(id);
        if (body !== undefined) list.push({ id, body });
      }
      // Every statement in hand, or the attempt is recorded statement by statement.
      if (list.length !== pendingIds.get(b.id)?.length) shared.delete(b.id);
      statements.set(b.id, list);
    }
    const send: BatchItem[] = [];
    const close: Closed[] = [];
    for (const { row, attempt } of claimed) {
      const endpoint = endpoints.get(row.id);
      // Deleted meanwhile: the cascade took the batch and its statements; nothing to write.
      if (!endpoint) close.push({ id: row.id, statements: [] });
      else if (!endpoint.enabled) close.push(closeDisabled(ctx, row.id, attempt, now));
      else
        send.push({
          id: row.id,
          attempt,
          endpoint,
          statements: statements.get(row.id) ?? [],
          shared: shared.has(row.id),
        });
    }
    return { send, close };
  },
  send: (ctx, item) => attemptBatch(ctx, item),
  record: (ctx, attempts, now) =>
    attempts.flatMap(({ item, result }) => recordAttempt(ctx, item, result, now)),
};

/** One xAPI-queue message per batch; `delaySeconds[i]`, when given, delays the i-th. */
export function enqueueBatches(
  ctx: ServiceContext,
  ids: readonly string[],
  delaySeconds?: readonly number[],
): Promise<void> {
  return enqueue(ctx, xapiTarget, ids, delaySeconds);
}
