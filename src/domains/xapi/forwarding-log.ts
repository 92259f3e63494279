import { and, desc, eq, exists, isNull, or, type SQL, sql } from "drizzle-orm";
import { type XapiActivity, type XapiStatementStatus, xapiBatches, xapiStatements } from "../../db/schema";
import type { Database } from "../../platform/db";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import type { ServiceContext } from "../../platform/service/context";

/**
 * The forwarding log's rows: each statement with its own state, or — while it shares its batch's
 * (`status` null: docs/design/xapi-forwarding.md) — the batch's: its status, requests, last error,
 * and `completed_at` as when they were sent.
 */
const shares = isNull(xapiStatements.status);
const sentAt = sql<
  string | null
>`CASE WHEN ${xapiBatches.logStatus} = 'sent' THEN ${xapiBatches.completedAt} END`;
const LOG_COLUMNS = {
  id: xapiStatements.id,
  endpointId: xapiStatements.endpointId,
  batchId: xapiStatements.batchId,
  verb: xapiStatements.verb,
  activityId: xapiStatements.activityId,
  userId: xapiStatements.userId,
  occurredAt: xapiStatements.occurredAt,
  status: sql<XapiStatementStatus>`coalesce(${xapiStatements.status}, ${xapiBatches.logStatus})`,
  attempts: sql<number>`CASE WHEN ${shares} THEN ${xapiBatches.logAttempts} ELSE ${xapiStatements.attempts} END`,
  lastError: sql<
    string | null
  >`CASE WHEN ${shares} THEN ${xapiBatches.logError} ELSE ${xapiStatements.lastError} END`,
  sentAt: sql<string | null>`CASE WHEN ${shares} THEN ${sentAt} ELSE ${xapiStatements.sentAt} END`,
  createdAt: xapiStatements.createdAt,
  completedAt: sql<string | null>`CASE WHEN ${shares} THEN ${sentAt} ELSE ${xapiStatements.completedAt} END`,
};

/** The log's rows under `where` (on xapi_statements), each with its batch's state where it shares it. */
export function forwardingLogQuery(db: Database, where: SQL | undefined) {
  return db
    .select(LOG_COLUMNS)
    .from(xapiStatements)
    .leftJoin(xapiBatches, and(shares, eq(xapiBatches.id, xapiStatements.batchId)))
    .where(where);
}

/** A statement whose status, its own or its batch's, is `status`. */
function statusIs(db: Database, status: XapiStatementStatus): SQL {
  // A failed statement always has its own state.
  if (status === "failed") return eq(xapiStatements.status, status);
  return or(
    eq(xapiStatements.status, status),
    and(
      shares,
      exists(
        db
          .select({ one: sql`1` })
          .from(xapiBatches)
          .where(and(eq(xapiBatches.id, xapiStatements.batchId), eq(xapiBatches.logStatus, status))),
      ),
    ),
  ) as SQL;
}

/** A page of the endpoint's forwarding log, newest first (ties by id). */
export async function listStatements(
  ctx: ServiceContext,
  {
    endpointId,
    status,
    verb,
    page,
  }: { endpointId: string; status?: XapiStatementStatus; verb?: XapiActivity; page: PageRequest },
) {
  const { limit, offset } = pageBounds(page);
  const where = and(
    eq(xapiStatements.endpointId, endpointId),
    status ? statusIs(ctx.db, status) : undefined,
    verb ? eq(xapiStatements.verb, verb) : undefined,
  );
  const pageQuery = forwardingLogQuery(ctx.db, where)
    .orderBy(desc(xapiStatements.createdAt), desc(xapiStatements.id))
    .limit(limit)
    .offset(offset);
  return pageWithTotal(ctx.db, pageQuery, xapiStatements, where);
}
