import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { outboxEvents } from "./events";
import { institutions, users } from "./identity";
import { OUTBOUND_ERROR_CODES } from "./outbound-codes";

export const DELIVERY_STATUSES = ["pending", "retrying", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    institutionId: text("institution_id")
      .notNull()
      .references(() => institutions.id),
    url: text("url").notNull(),
    description: text("description"),
    /** JSON array of event types, or `["*"]`. */
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** Why it was switched off by us (`too_many_failures`, `gone`, `target_refused`); null when a person did it or it is on. */
    disabledReason: text("disabled_reason"),
    disabledAt: text("disabled_at"),
    /** AES-GCM sealed `whsec_…` secret (ENCRYPTION_KEY); never stored in plain text. */
    secretSealed: text("secret_sealed").notNull(),
    /** The secret before the last rotation, still signing until `previous_secret_expires_at`. */
    previousSecretSealed: text("previous_secret_sealed"),
    previousSecretExpiresAt: text("previous_secret_expires_at"),
    /** Events in a row whose delivery ended `failed`, and when that run began. */
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    failingSince: text("failing_since"),
    createdBy: text("created_by").references(() => users.id),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("webhooks_institution_idx").on(t.institutionId, t.createdAt, t.id)],
);

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    eventId: text("event_id")
      .notNull()
      .references(() => outboxEvents.id, { onDelete: "cascade" }),
    eventType: text("event_type").notNull(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    /** Not before this time (ms): the backoff, kept in D1 so an early redelivery of the message waits. */
    nextAttemptAt: integer("next_attempt_at"),
    /** While an attempt is in flight (ms); a twin message that finds it claimed waits for it. */
    claimedUntil: integer("claimed_until"),
    lastResponseStatus: integer("last_response_status"),
    lastError: text("last_error"),
    /** The category of the last failure (OUTBOUND_ERROR_CODES, ./outbound-codes.ts); null after a success. */
    lastErrorCode: text("last_error_code", { enum: OUTBOUND_ERROR_CODES }),
    /** Set when a person asked for this delivery again (redeliver, recover): the original. */
    redeliveryOf: text("redelivery_of"),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [
    // One original delivery per (event, webhook), however often the event is fanned out.
    uniqueIndex("webhook_deliveries_event_webhook_idx")
      .on(t.eventId, t.webhookId)
      .where(sql`redelivery_of IS NULL`),
    index("webhook_deliveries_webhook_idx").on(t.webhookId, t.createdAt, t.id),
    index("webhook_deliveries_open_idx")
      .on(t.status, t.nextAttemptAt)
      .where(sql`status IN ('pending', 'retrying')`),
  ],
);

export const webhookDeliveryAttempts = sqliteTable(
  "webhook_delivery_attempts",
  {
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    number: integer("number").notNull(),
    startedAt: text("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    responseStatus: integer("response_status"),
    /** Why the attempt failed when there was no 2xx, in a sentence the customer may read. */
    error: text("error"),
    /** The failure's category: timeout, connection_failed, tls, dns, redirect, http_status, target_refused. */
    errorCode: text("error_code", { enum: OUTBOUND_ERROR_CODES }),
    /** The first KiB of the receiver's answer. */
    responseBody: text("response_body"),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.number] })],
);
