import { and, eq, inArray, sql } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import { type attempts, xapiBatches, xapiEndpoints } from "../../../db/schema";
import type { Statement } from "../../../platform/batch";
import { inJsonList } from "../../../platform/db";
import {
  type Attempt,
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
import { buildStatements, type Fact, restoreFact, type StoredFact } from "../statements";
import { type Exchange, exchange, type PendingStatement } from "./exchange";
import {
  attemptsOfBatchFactsQuery,
  failPendingQuery,
  ownStateQuery,
  pendingOfOwnStateBatchesQuery,
  recordSentBatchesQuery,
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
/** Why a pending statement that cannot be built again is failed. */
export const GONE = "what this statement reports no longer exists: it was not sent";

export interface BatchItem {
  id: string;
  /** The attempt's number (1-based), as the claim counted it. */
  attempt: number;
  endpoint: EndpointRow;
  statements: PendingStatement[];
  /**
   * Pending statements that could not be built again for this attempt (what they report was deleted
   * since: the attempt, its item, lesson or course, or the learner): recorded `failed` (`GONE`).
   */
  gone?: string[];
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

/**
 * The statements recording one answered attempt: each statement, the batch, the endpoint's health.
 * `written`: the health updates already in the same write (one record of several attempts); the
 * very same update of the same endpoint is not written twice (a flush of 20 accepted attempts of
 * one endpoint sets its `last_success_at` once).
 */
export function recordAttempt(
  ctx: ServiceContext,
  item: BatchItem,
  result: BatchResult,
  now: number,
  written: Set<string> = new Set(),
) {
  const at = nowIso(now);
  const ex = result.exchange;
  const outcomes = item.statements.map((s): StatementOutcome => {
    const settled = ex.settled.get(s.id);
    const status = settled?.status ?? (result.status === "failed" ? "failed" : null);
    const error = settled ? (settled.status === "failed" ? settled.error : null) : result.error;
    return { id: s.id, carried: ex.carried.get(s.id) ?? 0, status, error };
  });
  for (const id of item.gone ?? []) outcomes.push({ id, carried: 0, status: "failed", error: GONE });
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
        ...(result.status === "retrying" ? {} : { facts: null, bodies: null }),
      })
      .where(and(eq(xapiBatches.id, item.id), eq(xapiBatches.attemptCount, item.attempt))),
  ];
  statements.push(...healthStatements(ctx, item, ex, at, written));
  return statements;
}

/** The endpoint's health after an attempt, unless the same update is already in this write. */
function healthStatements(
  ctx: ServiceContext,
  item: BatchItem,
  ex: Exchange,
  at: string,
  written: Set<string>,
): Statement[] {
  const health = healthChanges(ex, at);
  if (!health) return [];
  const key = healthKey(item.endpoint.id, health);
  if (key !== null && written.has(key)) return [];
  if (key !== null) written.add(key);
  return [ctx.db.update(xapiEndpoints).set(health).where(eq(xapiEndpoints.id, item.endpoint.id))];
}

/**
 * How many requests carried each statement of an attempt the LRS accepted whole (every statement
 * sent, by as many requests each, sharing the batch's state, nothing rejected or stopped), or null
 * for any other attempt: those are recorded by `recordAttempt` one by one.
 */
function sentWhole(item: BatchItem, result: BatchResult): number | null {
  const ex = result.exchange;
  if (result.status !== "succeeded" || result.continuation || !item.shared || (item.gone?.length ?? 0) > 0)
    return null;
  if (ex.stop !== null || ex.rejection !== null || item.statements.length === 0) return null;
  const carried = ex.carried.get(item.statements[0]?.id ?? "") ?? 0;
  for (const s of item.statements)
    if (ex.settled.get(s.id)?.status !== "sent" || (ex.carried.get(s.id) ?? 0) !== carried) return null;
  return carried;
}

/**
 * A record of answered attempts: those the LRS accepted whole in one UPDATE per (attempt, requests,
 * status) — in a burst, a few statements for tens of batches —, every other one by `recordAttempt`.
 */
function recordAttempts(ctx: ServiceContext, attempts: Attempt<BatchItem, BatchResult>[], now: number) {
  const written = new Set<string>();
  const at = nowIso(now);
  const statements: Statement[] = [];
  const whole = new Map<string, { carried: number; attempt: number; status: number | null; ids: string[] }>();
  for (const { item, result } of attempts) {
    const carried = sentWhole(item, result);
    if (carried === null) {
      statements.push(...recordAttempt(ctx, item, result, now, written));
      continue;
    }
    const status = result.exchange.lastStatus;
    const key = `${carried} ${item.attempt} ${status}`;
    const group = whole.get(key) ?? { carried, attempt: item.attempt, status, ids: [] };
    group.ids.push(item.id);
    whole.set(key, group);
    statements.push(...healthStatements(ctx, item, result.exchange, at, written));
  }
  for (const g of whole.values())
    statements.unshift(
      recordSentBatchesQuery(ctx.db, {
        batchIds: g.ids,
        attempt: g.attempt,
        carried: g.carried,
        status: g.status,
        at,
      }),
    );
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

/** What makes two health updates the same (plain values only), or null: not to be merged. */
function healthKey(endpointId: string, changes: SQLiteUpdateSetSource<typeof xapiEndpoints>): string | null {
  const values = Object.entries(changes).sort(([a], [b]) => (a < b ? -1 : 1));
  if (values.some(([, v]) => v !== null && typeof v !== "string")) return null;
  return JSON.stringify([endpointId, values]);
}

/** A claimed batch that will not be sent (its endpoint is switched off): it and its statements closed. */
function closeDisabled(ctx: ServiceContext, id: string, attempt: number, now: number): Closed {
  const at = nowIso(now);
  return {
    id,
    statements: [
      ownStateQuery(ctx.db, id, attempt),
      failPendingQuery(ctx.db, id, attempt, ENDPOINT_DISABLED, at),
      ctx.db
        .update(xapiBatches)
        .set({
          status: "failed",
          logStatus: null,
          claimedUntil: null,
          lastError: ENDPOINT_DISABLED,
          completedAt: at,
          facts: null,
          bodies: null,
          attemptCount: attempt - 1,
        })
        .where(and(eq(xapiBatches.id, id), eq(xapiBatches.attemptCount, attempt))),
    ],
  };
}

/** A batch's stored bodies (the JSON array of its statements as built) by statement id, each as JSON text. */
function storedBodies(json: string, into: Map<string, string>): void {
  for (const statement of JSON.parse(json) as { id: string }[])
    into.set(statement.id, JSON.stringify(statement));
}

/**
 * The statements of claimed batches that keep facts, built again for this attempt (bodies by
 * statement id): from the same facts, so to the same ids, with what they refer to as it is now (a
 * learner renamed since is sent by the new name) and the endpoint's actor format as it is now. A
 * fact whose attempt, item, lesson, course or learner is gone builds nothing.
 */
async function rebuiltBodies(
  ctx: ServiceContext,
  batches: readonly { endpoint: EndpointRow; facts: string }[],
  attemptRows: readonly (typeof attempts.$inferSelect)[],
): Promise<Map<string, string>> {
  const attemptsById = new Map(attemptRows.map((a) => [a.id, a]));
  const byEndpoint = new Map<string, { endpoint: EndpointRow; facts: Fact[] }>();
  for (const { endpoint, facts } of batches) {
    const entry = byEndpoint.get(endpoint.id) ?? { endpoint, facts: [] };
    byEndpoint.set(endpoint.id, entry);
    for (const stored of JSON.parse(facts) as StoredFact[]) {
      const fact = restoreFact(stored, attemptsById);
      if (fact) entry.facts.push(fact);
    }
  }
  const bodies = new Map<string, string>();
  for (const { endpoint, facts } of byEndpoint.values())
    for (const built of await buildStatements(ctx, endpoint, facts)) bodies.set(built.id, built.body);
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
  // very next attempt), their facts (or, made before facts were kept, bodies), the attempts those
  // facts name and the ids of their pending statements: one round trip. An attempt sends the pending
  // statements only, built again from their facts, in the order they happened.
  async prepare(ctx, claimed, now) {
    const ids = claimed.map((c) => c.row.id);
    // Separate reads rather than a join: D1's batch answers rows as objects, where the tables' `id`
    // columns would collide.
    const [batches, endpointRows, own, attemptRows] = await ctx.db.batch([
      ctx.db
        .select({
          id: xapiBatches.id,
          endpointId: xapiBatches.endpointId,
          facts: xapiBatches.facts,
          bodies: xapiBatches.bodies,
          entries: xapiBatches.entries,
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
      attemptsOfBatchFactsQuery(ctx.db, ids),
    ]);
    const byId = new Map(endpointRows.map((e) => [e.id, e]));
    const endpoints = new Map(batches.map((b) => [b.id, byId.get(b.endpointId)]));
    // Pending: all the statements of a batch whose statements share its pending state (in the order
    // they happened, as stored), the pending rows of one whose statements hold their own.
    const pendingIds = new Map<string, string[]>();
    const shared = new Set<string>();
    for (const b of batches)
      if (b.logStatus === "pending") {
        pendingIds.set(
          b.id,
          (JSON.parse(b.entries) as [string][]).map(([id]) => id),
        );
        shared.add(b.id);
      }
    for (const s of own) {
      if (!s.batchId) continue;
      const list = pendingIds.get(s.batchId);
      if (list) list.push(s.id);
      else pendingIds.set(s.batchId, [s.id]);
    }
    // The bodies to send: built again from the facts of the batches to be sent, or as stored.
    const bodies = new Map<string, string>();
    const toBuild: { endpoint: EndpointRow; facts: string }[] = [];
    for (const b of batches) {
      const endpoint = endpoints.get(b.id);
      if (!endpoint?.enabled || !pendingIds.has(b.id)) continue;
      if (b.facts !== null) toBuild.push({ endpoint, facts: b.facts });
      else if (b.bodies !== null) storedBodies(b.bodies, bodies);
    }
    if (toBuild.length > 0)
      for (const [id, body] of await rebuiltBodies(ctx, toBuild, attemptRows)) bodies.set(id, body);
    const statements = new Map<string, { send: PendingStatement[]; gone: string[] }>();
    for (const b of batches) {
      const send: PendingStatement[] = [];
      const gone: string[] = [];
      for (const id of pendingIds.get(b.id) ?? []) {
        const body = bodies.get(id);
        if (body !== undefined) send.push({ id, body });
        else gone.push(id);
      }
      statements.set(b.id, { send, gone });
    }
    const send: BatchItem[] = [];
    const close: Closed[] = [];
    for (const { row, attempt } of claimed) {
      const endpoint = endpoints.get(row.id);
      const work = statements.get(row.id) ?? { send: [], gone: [] };
      // Deleted meanwhile: the cascade took the batch and its statements; nothing to write.
      if (!endpoint) close.push({ id: row.id, statements: [] });
      else if (!endpoint.enabled) close.push(closeDisabled(ctx, row.id, attempt, now));
      else
        send.push({
          id: row.id,
          attempt,
          endpoint,
          statements: work.send,
          gone: work.gone,
          // Every statement in hand, or the attempt is recorded statement by statement.
          shared: shared.has(row.id) && work.gone.length === 0,
        });
    }
    return { send, close };
  },
  send: (ctx, item) => attemptBatch(ctx, item),
  record: recordAttempts,
};

/** One xAPI-queue message per batch; `delaySeconds[i]`, when given, delays the i-th. */
export function enqueueBatches(
  ctx: ServiceContext,
  ids: readonly string[],
  delaySeconds?: readonly number[],
): Promise<void> {
  return enqueue(ctx, xapiTarget, ids, delaySeconds);
}
