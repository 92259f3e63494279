import { and, desc, eq, gte, lt, notInArray, type SQL, sql } from "drizzle-orm";
import { outboxEvents } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import { EVENT_RETENTION_MS, INTERNAL_EVENT_TYPES } from "../../platform/events";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";

/**
 * The events domain: an institution's events of the last 30 days, read from the outbox table (the
 * events queue's fan-out to webhooks is the webhooks domain's; this only lists and shows them).
 */

type EventRow = typeof outboxEvents.$inferSelect;

export function presentEvent(row: Pick<EventRow, "id" | "type" | "createdAt" | "payload">) {
  return { id: row.id, type: row.type, created_at: row.createdAt, data: row.payload };
}

/**
 * Test pings are deliveries to one webhook, not things that happened, and internal events
 * (platform/events.ts) are the platform's own: neither is listed.
 */
const HIDDEN_TYPES = ["ping", ...Object.keys(INTERNAL_EVENT_TYPES)];

function visible(institutionId: string, now: number): SQL {
  const recent = gte(outboxEvents.createdAt, nowIso(now - EVENT_RETENTION_MS));
  // Spelt out rather than and(): and() may return undefined (for no conditions), these are three.
  return sql`(${eq(outboxEvents.institutionId, institutionId)} AND ${notInArray(outboxEvents.type, HIDDEN_TYPES)} AND ${recent})`;
}

/** A page of the institution's events, newest first (ties by id), filtered by type and time. */
export async function listEvents(
  ctx: ServiceContext,
  {
    institutionId,
    page,
    filters,
  }: { institutionId: string; page: PageRequest; filters: { type?: string; from?: string; to?: string } },
) {
  const conditions: SQL[] = [visible(institutionId, ctx.now())];
  if (filters.type) conditions.push(eq(outboxEvents.type, filters.type));
  if (filters.from) conditions.push(gte(outboxEvents.createdAt, nowIso(Date.parse(filters.from))));
  if (filters.to) conditions.push(lt(outboxEvents.createdAt, nowIso(Date.parse(filters.to))));
  const where = and(...conditions);
  const db = ctx.db;
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

/** One of the institution's events, as a webhook delivers it; 404 when it is not the institution's. */
export async function getEvent(
  ctx: ServiceContext,
  { institutionId, id }: { institutionId: string; id: string },
) {
  const row = await ctx.db
    .select({
      id: outboxEvents.id,
      type: outboxEvents.type,
      createdAt: outboxEvents.createdAt,
      payload: outboxEvents.payload,
    })
    .from(outboxEvents)
    .where(and(eq(outboxEvents.id, id), visible(institutionId, ctx.now())))
    .get();
  if (!row) throw new ApiError("not_found", `No event ${id}.`);
  return presentEvent(row);
}
