import { and, desc, eq } from "drizzle-orm";
import { type XapiActivity, type XapiStatementStatus, xapiStatements } from "../../db/schema";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import type { ServiceContext } from "../../platform/service/context";

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
    status ? eq(xapiStatements.status, status) : undefined,
    verb ? eq(xapiStatements.verb, verb) : undefined,
  );
  const pageQuery = ctx.db
    .select({
      id: xapiStatements.id,
      verb: xapiStatements.verb,
      activityId: xapiStatements.activityId,
      userId: xapiStatements.userId,
      occurredAt: xapiStatements.occurredAt,
      status: xapiStatements.status,
      attempts: xapiStatements.attempts,
      lastError: xapiStatements.lastError,
      sentAt: xapiStatements.sentAt,
      createdAt: xapiStatements.createdAt,
    })
    .from(xapiStatements)
    .where(where)
    .orderBy(desc(xapiStatements.createdAt), desc(xapiStatements.id))
    .limit(limit)
    .offset(offset);
  return pageWithTotal(ctx.db, pageQuery, xapiStatements, where);
}
