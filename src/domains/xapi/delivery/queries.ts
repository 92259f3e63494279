import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { attempts, xapiBatches, xapiStatements } from "../../../db/schema";
import { type Database, inJsonList } from "../../../platform/db";

/**
 * xAPI delivery's query builders for an attempt of a batch (the delivery engine writes records with
 * drizzle's batch): what `prepare` reads again (the facts' attempts, the statements still pending)
 * and what `record` writes (each statement's outcome, the batches accepted whole, a batch's
 * statements given rows of their own). Each has a test in test/xapi/delivery-sql.test.ts.
 */

/**
 * The attempts named by the stored facts (`["answered", <attempt id>]`) of those batches of
 * `batchIds` that keep facts: what rebuilding their statements for an attempt reads again (the other
 * facts are kept whole).
 */
export function attemptsOfBatchFactsQuery(db: Database, batchIds: readonly string[]) {
  return db
    .select()
    .from(attempts)
    .where(
      sql`${attempts.id} IN (SELECT f.value ->> 1 FROM ${xapiBatches} b, json_each(b.facts) f
        WHERE b.id IN (SELECT value FROM json_each(${JSON.stringify(batchIds)})) AND b.facts IS NOT NULL
          AND f.type = 'array' AND f.value ->> 0 = 'answered')`,
    );
}

/**
 * The pending statements, with their batch, of those batches of `batchIds` whose statements each
 * hold their own state (a statement sharing its batch's has no status of its own), in the order they
 * happened: what an attempt of them sends. (A batch whose statements share its pending state has
 * them all pending, in `statement_ids`.)
 */
export function pendingOfOwnStateBatchesQuery(db: Database, batchIds: readonly string[]) {
  return db
    .select({ id: xapiStatements.id, batchId: xapiStatements.batchId })
    .from(xapiStatements)
    .where(
      and(
        inSql(xapiStatements.id, namedBy(batchIds)),
        inJsonList(xapiStatements.batchId, batchIds),
        eq(xapiStatements.status, "pending"),
      ),
    )
    .orderBy(asc(xapiStatements.occurredAt), asc(xapiStatements.id));
}

/**
 * Batch `batchId`'s statements, while they share its state, given rows of their own (pending, with
 * the batch's requests and error), made from its `entries`, while attempt `attempt` holds the batch:
 * before an attempt whose outcomes differ, or that failed them, is recorded on each
 * (`recordStatementsQueries`), in the same write that sets the batch's `log_status` to null. A batch
 * that no longer shares makes nothing.
 */
export function ownStateQuery(db: Database, batchId: string, attempt: number) {
  // A query builder over the SELECT (drizzle's D1 batch cannot bind a raw statement's parameters),
  // which gives every column in the table's order.
  return db
    .insert(xapiStatements)
    .select(
      sql`SELECT j.value ->> 0, b.endpoint_id, b.id, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4,
        'pending', b.log_attempts, b.log_error, NULL, b.created_at, NULL
      FROM ${xapiBatches} b, json_each(b.entries) j
      WHERE b.id = ${batchId} AND b.attempt_count = ${attempt} AND b.log_status IS NOT NULL`,
    )
    .onConflictDoNothing();
}

/**
 * Batch `batchId`'s pending statements failed with `error` at `at`, while attempt `attempt` holds the
 * batch (its endpoint was switched off): after `ownStateQuery` gave each a row, in the same write that
 * sets the batch's `log_status` to null.
 */
export function failPendingQuery(db: Database, batchId: string, attempt: number, error: string, at: string) {
  return db
    .update(xapiStatements)
    .set({ status: "failed", lastError: error, completedAt: at })
    .where(
      and(
        inSql(xapiStatements.id, namedBy([batchId])),
        eq(xapiStatements.batchId, batchId),
        eq(xapiStatements.status, "pending"),
        batchHeldBy(batchId, attempt),
      ),
    );
}

/** One statement's part in an attempt's record. */
export interface StatementOutcome {
  id: string;
  /** Requests of this attempt that carried it. */
  carried: number;
  /** Its end, or null: still pending. */
  status: "sent" | "failed" | null;
  /** Why it failed, or why it is still pending (the error that stopped the attempt); null once sent. */
  error: string | null;
}

/**
 * What one attempt of batch `batchId` came to for each of its statements (`outcomes`), at `at`. Only
 * while the attempt's claim holds (the batch's attempt_count is still `attempt`) and only on
 * statements still pending, so a record written late or twice changes nothing. One plain UPDATE per distinct outcome (status, requests, error) over the ids that
 * share it, each by primary key: an attempt the LRS answered at once is one UPDATE of constants
 * (a per-row lookup into a JSON of the outcomes cost SQLite most of the delivery's time). Query
 * builders: the delivery engine writes records with drizzle's batch. An outcome that changes
 * nothing (no request carried it, no end, no error) writes nothing.
 */
export function recordStatementsQueries(
  db: Database,
  batchId: string,
  attempt: number,
  outcomes: readonly StatementOutcome[],
  at: string,
) {
  const groups = new Map<string, { outcome: StatementOutcome; ids: string[] }>();
  for (const outcome of outcomes) {
    if (outcome.carried === 0 && outcome.status === null && outcome.error === null) continue;
    const key = JSON.stringify([
      outcome.status,
      outcome.carried,
      outcome.status === "sent" ? null : outcome.error,
    ]);
    const group = groups.get(key);
    if (group) group.ids.push(outcome.id);
    else groups.set(key, { outcome, ids: [outcome.id] });
  }
  return [...groups.values()].map(({ outcome: { status, carried, error }, ids }) =>
    db
      .update(xapiStatements)
      .set({
        attempts: sql`"xapi_statements"."attempts" + ${carried}`,
        ...(status ? { status, completedAt: at } : {}),
        ...(status === "sent" ? { lastError: null, sentAt: at } : error !== null ? { lastError: error } : {}),
      })
      .where(
        and(
          inJsonList(xapiStatements.id, ids),
          eq(xapiStatements.batchId, batchId),
          eq(xapiStatements.status, "pending"),
          batchHeldBy(batchId, attempt),
        ),
      ),
  );
}

/**
 * The ids of the statements the batches `batchIds` name (`entries`): how a batch's statements are
 * found, by primary key (a statement row has no index on its batch). Callers also check `batch_id`.
 */
export function namedBy(batchIds: readonly string[]): SQL {
  return sql`SELECT j.value ->> 0 FROM ${xapiBatches} n, json_each(n.entries) j WHERE n.id IN (SELECT value FROM json_each(${JSON.stringify(batchIds)}))`;
}

/** `column IN (subquery)`. */
function inSql(column: SQLiteColumn, subquery: SQL): SQL {
  return sql`${column} IN (${subquery})`;
}

/** A batch's attempt `attempt` still holds it: its record (or its close) may be written. */
export function batchHeldBy(batchId: string, attempt: number): SQL {
  return sql`EXISTS (SELECT 1 FROM ${xapiBatches} WHERE ${xapiBatches.id} = ${batchId} AND ${xapiBatches.attemptCount} = ${attempt})`;
}

/**
 * The record of attempts that the LRS accepted whole, each batch's statements all sent by `carried`
 * requests and sharing its state: one statement for every such batch of a record (`batchIds`), each
 * while still claimed by attempt `attempt` (a stale attempt's record changes nothing). Exactly what
 * `recordAttempt` (record.ts) writes for one such batch: sent, the requests counted on its
 * statements, its answer's `status`, finished `at`, its facts cleared.
 */
export function recordSentBatchesQuery(
  db: Database,
  batches: {
    batchIds: readonly string[];
    attempt: number;
    carried: number;
    status: number | null;
    at: string;
  },
) {
  return db
    .update(xapiBatches)
    .set({
      status: "succeeded",
      logStatus: "sent",
      logAttempts: sql`${xapiBatches.logAttempts} + ${batches.carried}`,
      logError: null,
      claimedUntil: null,
      attemptCount: batches.attempt,
      nextAttemptAt: null,
      lastResponseStatus: batches.status,
      lastError: null,
      lastErrorCode: null,
      completedAt: batches.at,
      facts: null,
      bodies: null,
    })
    .where(and(inJsonList(xapiBatches.id, batches.batchIds), eq(xapiBatches.attemptCount, batches.attempt)));
}
