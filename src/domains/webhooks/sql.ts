import type { outboxEvents, webhookDeliveries, webhooks } from "../../db/schema";
import type { HookSigningRow } from "./hook-row";

/**
 * The webhooks domain's raw SQL: the delivery pipeline's hot path on the D1 binding (the ORM's row
 * mapping was a tenth of the consumer's CPU time) and the one insert that checks a limit in the same
 * statement. Ids and rows travel as one JSON parameter (D1 binds at most 100 per statement). Each
 * statement has a test in test/webhooks/sql.test.ts.
 */

type Webhook = typeof webhooks.$inferSelect;
type Delivery = typeof webhookDeliveries.$inferSelect;
type OutboxEvent = typeof outboxEvents.$inferSelect;

/**
 * A new webhook, only while its institution has fewer than ?12 (the limit is checked inside the
 * INSERT, so concurrent creations cannot overshoot it). Binds ?1 id, ?2 institution, ?3 url,
 * ?4 description, ?5 events (JSON), ?6 enabled (0/1), ?7 disabled reason, ?8 disabled at,
 * ?9 sealed secret, ?10 created by, ?11 now (created and updated), ?12 the limit. Changes 1 row or 0.
 */
export const CREATE_WEBHOOK_SQL = `INSERT INTO webhooks (id, institution_id, url, description, events, enabled, disabled_reason, disabled_at, secret_sealed, consecutive_failures, created_by, created_at, updated_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, ?10, ?11, ?11
     WHERE (SELECT count(*) FROM webhooks WHERE institution_id = ?2) < ?12`;

/** The fan-out's events (?1: a JSON array of ids), with what it needs to send them. */
export const FAN_OUT_EVENTS_SQL = `SELECT id, type, institution_id, fanned_out_at, created_at, payload FROM outbox_events
  WHERE id IN (SELECT value FROM json_each(?1))`;
/** A row of FAN_OUT_EVENTS_SQL: `payload` is the JSON text. */
export interface FanOutEventRow {
  id: OutboxEvent["id"];
  type: OutboxEvent["type"];
  institution_id: OutboxEvent["institutionId"];
  fanned_out_at: OutboxEvent["fannedOutAt"];
  created_at: OutboxEvent["createdAt"];
  payload: string;
}

/** The enabled webhooks of the institutions in ?1 (a JSON array of ids): the fan-out's subscribers. */
export const SUBSCRIBED_HOOKS_SQL = `SELECT id, institution_id, events, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at,
    consecutive_failures
  FROM webhooks WHERE institution_id IN (SELECT value FROM json_each(?1)) AND enabled = 1`;
/** A row of SUBSCRIBED_HOOKS_SQL: `events` is the JSON text of the subscribed types. */
export interface SubscribedHookRow extends HookSigningRow {
  id: Webhook["id"];
  institution_id: Webhook["institutionId"];
  events: string;
}

/**
 * The fan-out's deliveries, ?1 a JSON array of [id, webhook, event, type, 1 when sent at once (else
 * 0)]: a row marked for a direct send is inserted claimed until ?2, its first attempt counted; ?3 the
 * due time (ms), ?4 now (text). A (event, webhook) pair that has a delivery already is skipped.
 * Returns the ids inserted.
 */
export const INSERT_DELIVERIES_SQL = `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, status, attempt_count, claimed_until, next_attempt_at, created_at)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, 'pending', value ->> 4, CASE WHEN value ->> 4 = 1 THEN ?2 END, ?3, ?4
  FROM json_each(?1) WHERE true
  ON CONFLICT DO NOTHING RETURNING id`;

/**
 * The deliveries in ?1 (a JSON array of ids) with their webhook and event: what the delivery engine
 * reads in its claim's round trip (the engine's state columns, then signing and the body).
 */
export const DELIVERY_DETAILS_SQL = `SELECT d.id, d.status, d.claimed_until, d.next_attempt_at, w.id AS webhook_id, w.url, w.enabled, w.secret_sealed,
    w.previous_secret_sealed, w.previous_secret_expires_at, w.consecutive_failures, e.id AS event_id, e.type AS event_type,
    e.created_at AS event_created_at, e.payload
  FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN outbox_events e ON e.id = d.event_id
  WHERE d.id IN (SELECT value FROM json_each(?1))`;
/** A row of DELIVERY_DETAILS_SQL: `enabled` is SQLite's 0/1, `payload` the event's JSON text. */
export interface DeliveryDetailsRow extends HookSigningRow {
  id: Delivery["id"];
  status: Delivery["status"];
  claimed_until: Delivery["claimedUntil"];
  next_attempt_at: Delivery["nextAttemptAt"];
  webhook_id: Webhook["id"];
  enabled: number;
  event_id: OutboxEvent["id"];
  event_type: OutboxEvent["type"];
  event_created_at: OutboxEvent["createdAt"];
  payload: string;
}
