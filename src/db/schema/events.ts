import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The outbox: every domain event is written in the same D1 batch as the change it reports, so
 * nothing is lost between the two. Webhooks, xAPI forwarding and LTI passback consume it.
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
  },
  (t) => [index("outbox_events_institution_idx").on(t.institutionId, t.createdAt, t.id), index("outbox_events_created_idx").on(t.createdAt, t.id)],
);
