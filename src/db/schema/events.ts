import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The outbox: every domain event is written in the same D1 batch as the change it reports, so
 * nothing is lost between the two. The dispatcher (platform/outbox-dispatch.ts) hands each event to
 * every subscriber (webhooks, LTI passback, later xAPI forwarding).
 */
export const outboxEvents = sqliteTable(
  "outbox_events",
  {
    id: text("id").primaryKey(),
    type: text("type").notNull(),
    institutionId: text("institution_id"),
    userId: text("user_id"),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
    /** When the webhook fan-out created this event's deliveries (its own shortcut); null until then. */
    fannedOutAt: text("fanned_out_at"),
    /** When the sweep last re-sent it to the events queue (ms), so a backlog is not re-sent every minute. */
    requeuedAt: integer("requeued_at"),
    /**
     * When every subscriber took the event in one dispatch; null until then, and the sweep re-sends
     * it. Set at insert for a row that is never dispatched (the test ping).
     */
    dispatchedAt: text("dispatched_at"),
  },
  (t) => [
    index("outbox_events_institution_idx").on(t.institutionId, t.createdAt, t.id),
    index("outbox_events_created_idx").on(t.createdAt, t.id),
    index("outbox_events_type_idx").on(t.institutionId, t.type, t.createdAt, t.id),
    // The sweep's scan; partial, so it holds only the few events not yet dispatched.
    index("outbox_events_undispatched_idx").on(t.createdAt).where(sql`dispatched_at IS NULL`),
    // The purge of internal events a day old (INTERNAL_EVENT_RETENTION_MS); partial, so it holds only
    // the last day's internal events. Its condition names the types literally: a statement uses it
    // only with the same literal condition.
    index("outbox_events_internal_idx").on(t.createdAt).where(sql`type = 'attempts.recorded'`),
  ],
);
