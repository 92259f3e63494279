import type { XapiActivity, XapiStatementStatus } from "../../db/schema";
import { type PageRequest, pageBounds } from "../../platform/http/pagination";
import type { ServiceContext } from "../../platform/service/context";
import { LOG_PAGE_SQL, LOG_TOTAL_SQL, type LogRow } from "./sql";

/** One statement of the forwarding log. */
export interface LogEntry {
  id: string;
  verb: XapiActivity;
  activityId: string;
  userId: string;
  occurredAt: string;
  status: XapiStatementStatus;
  attempts: number;
  lastError: string | null;
  sentAt: string | null;
  createdAt: string;
}

/**
 * The forwarding log: a page of an endpoint's statements, newest first (by batch, then the
 * latest-happened first within it), each with its batch's state while it shares it, or its own
 * (docs/design/xapi-forwarding.md, "The log packed per batch"), and how many the filters match — the
 * page and its total in one D1 batch, one snapshot.
 */
export async function listStatements(
  ctx: ServiceContext,
  {
    endpointId,
    status,
    verb,
    page,
  }: { endpointId: string; status?: XapiStatementStatus; verb?: XapiActivity; page: PageRequest },
): Promise<{ rows: LogEntry[]; total: number }> {
  const { limit, offset } = pageBounds(page);
  const [rows, totals] = await ctx.d1.batch<unknown>([
    ctx.d1.prepare(LOG_PAGE_SQL).bind(endpointId, status ?? null, verb ?? null, limit, offset),
    ctx.d1.prepare(LOG_TOTAL_SQL).bind(endpointId, status ?? null, verb ?? null),
  ]);
  return {
    rows: ((rows?.results ?? []) as LogRow[]).map((r) => ({
      id: r.id,
      verb: r.verb,
      activityId: r.activity_id,
      userId: r.user_id,
      occurredAt: r.occurred_at,
      status: r.status,
      attempts: r.attempts,
      lastError: r.last_error,
      sentAt: r.sent_at,
      createdAt: r.created_at,
    })),
    total: ((totals?.results ?? [])[0] as { total: number } | undefined)?.total ?? 0,
  };
}
