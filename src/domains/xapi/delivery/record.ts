// What one attempt of an xAPI batch did, recorded on its statements, the batch and the endpoint's
// health (./target.ts runs the attempts).
import { and, eq, sql } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { xapiBatches, xapiEndpoints } from "../../../db/schema";
import type { Statement } from "../../../platform/batch";
import type { Attempt, Closed, Verdict } from "../../../platform/delivery";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import type { EndpointRow } from "../lrs-client";
import type { Exchange, PendingStatement } from "./exchange";
import {
  failPendingQuery,
  ownStateQuery,
  recordSentBatchesQuery,
  recordStatementsQueries,
  type StatementOutcome,
} from "./queries";

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

/**
 * The statements recording one answered attempt: each statement, the batch, the endpoint's health.
 * `written`: the health updates already in the same write (one record of several attempts); the
 * very same update of the same endpoint is not written twice (a flush of 20 accepted attempts of
 * one endpoint sets its `last_success_at` once).
 */
function recordAttempt(
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
export function recordAttempts(
  ctx: ServiceContext,
  attempts: Attempt<BatchItem, BatchResult>[],
  now: number,
) {
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
export function closeDisabled(ctx: ServiceContext, id: string, attempt: number, now: number): Closed {
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
