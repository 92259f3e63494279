import { and, desc, eq, gte, lt, ne, type SQL, sql } from "drizzle-orm";
import { outboxEvents } from "../../db/schema";
import type { Env } from "../../env";
import { database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { EVENT_RETENTION_MS } from "../../platform/events";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { nowIso } from "../../platform/ids";

type EventRow = typeof outboxEvents.$inferSelect;

export function presentEvent(row: Pick<EventRow, "id" | "type" | "createdAt" | "payload">) {
  return { id: row.id, type: row.type, created_at: row.createdAt, data: row.payload };
}

/** Test pings are deliveries to one webhook, not things that happened: they are not listed. */
function visible(institutionId: string): SQL {
  const recent = gte(outboxEvents.createdAt, nowIso(Date.now() - EVENT_RETENTION_MS));
  // Spelt out rather than and(): and() may return undefined (for no conditions), these are three.
  return sql`(${eq(outboxEvents.institutionId, institutionId)} AND ${ne(outboxEvents.type, "ping")} AND ${recent})`;
}

export async function listEvents(
  env: Env,
  institutionId: string,
  page: PageRequest,
  filters: { type?: string; from?: string; to?: string },
) {
  const conditions: SQL[] = [visible(institutionId)];
  if (filters.type) conditions.push(eq(outboxEvents.type, filters.type));
  if (filters.from) conditions.push(gte(outboxEvents.createdAt, nowIso(Date.parse(filters.from))));
  if (filters.to) conditions.push(lt(outboxEvents.createdAt, nowIso(Date.parse(filters.to))));
  const where = and(...conditions);
  const db = database(env.DB);
  const { limit, offset } = pageBounds(page);
  const columns = {
    id: outboxEvents.id,
    type: outboxEvents.type,
    createdAt: outboxEvents.createdAt,
    payload: outboxEvents.payload,
  };
  const pageQuery = db
    .select(columns)
    .from(outboxEvents)
    .where(where)
    .orderBy(desc(outboxEvents.createdAt), desc(outboxEvents.id))
    .limit(limit)
    .offset(offset);
  const { rows, total } = await pageWithTotal(db, pageQuery, outboxEvents, where);
  return { total, data: rows.map(presentEvent) };
}

export async function getEvent(env: Env, institutionId: string, id: string) {
  const row = await database(env.DB)
    .select({
      id: outboxEvents.id,
      type: outboxEvents.type,
      createdAt: outboxEvents.createdAt,
      payload: outboxEvents.payload,
    })
    .from(outboxEvents)
    .where(and(eq(outboxEvents.id, id), visible(institutionId)))
    .get();
  if (!row) throw new ApiError("not_found", `No event ${id}.`);
  return presentEvent(row);
}
