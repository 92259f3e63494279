/**
 * Billing's raw SQL: the claim of a Stripe event by the delivery that handles it, and the statements
 * that ride behind a subscription's conditional write in one batch, each applied only when the one
 * before it changed a row (SQLite's `changes()` reads the statement just before). Each statement has
 * a test in test/billing/sql.test.ts.
 */

/**
 * Takes Stripe event ?1 (of type ?2) in hand at ?3 (ISO 8601 with milliseconds): inserts it when it is
 * new, or claims it again when its handling never finished and the last claim is older than ?4 (the
 * handler died). Changes one row when this delivery holds the event; none when the event was handled
 * already or another delivery holds it right now.
 */
export const CLAIM_EVENT_SQL = `INSERT INTO stripe_events (id, type, received_at, claimed_at) VALUES (?1, ?2, ?3, ?3)
  ON CONFLICT (id) DO UPDATE SET claimed_at = excluded.claimed_at
  WHERE stripe_events.processed_at IS NULL
    AND (stripe_events.claimed_at IS NULL OR stripe_events.claimed_at < ?4)`;

/** Lets go of event ?1 claimed at ?2 after its handling failed, so that Stripe's retry need not wait out the claim. */
export const RELEASE_EVENT_SQL = `UPDATE stripe_events SET claimed_at = NULL
  WHERE id = ?1 AND claimed_at = ?2 AND processed_at IS NULL`;

/**
 * Marks event ?1 handled at ?2, for institution ?3 (null: it concerns none of ours). The last
 * statement of the event's batch, so that the outbox events riding on it (`eventsIfLastChanged`) are
 * written by one delivery only.
 */
export const MARK_EVENT_PROCESSED_SQL = `UPDATE stripe_events SET processed_at = ?2, institution_id = ?3
  WHERE id = ?1 AND processed_at IS NULL`;

/** MARK_EVENT_PROCESSED_SQL, only when the statement before it changed a row (the subscription's write won). */
export const MARK_EVENT_PROCESSED_IF_CHANGED_SQL = `${MARK_EVENT_PROCESSED_SQL} AND changes() > 0`;

/**
 * Institution ?1 follows its subscription: plan ?2, seats ?3, the plan's own rate limit, changed at ?4 —
 * only when the statement before it (the billing account's conditional write) changed a row. An
 * Enterprise institution keeps its contract (plan, seats, limit): billing never changes it, but the
 * row is still touched, so the statements after it still follow.
 */
export const INSTITUTION_FOLLOWS_SQL = `UPDATE institutions SET
    plan = CASE WHEN plan = 'enterprise' THEN plan ELSE ?2 END,
    seats = CASE WHEN plan = 'enterprise' THEN seats ELSE ?3 END,
    rate_limit_per_minute = CASE WHEN plan = 'enterprise' THEN rate_limit_per_minute ELSE NULL END,
    updated_at = CASE WHEN plan = 'enterprise' OR (plan = ?2 AND seats IS ?3 AND rate_limit_per_minute IS NULL)
      THEN updated_at ELSE ?4 END
  WHERE id = ?1 AND changes() > 0`;
