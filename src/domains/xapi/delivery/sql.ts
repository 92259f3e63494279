import type { courses, lessons, outboxEvents, users, xapiEndpoints } from "../../../db/schema";
import type { AttemptFact } from "../statements";

/**
 * xAPI delivery's raw SQL: the subscriber's reads, the offer's inserts, the dead-letter consumer's
 * close and the sweeps' scans (an attempt's reads and records are query builders, in queries.ts). Ids
 * and rows travel as one JSON parameter (D1 binds at most 100 per statement). Each statement has a
 * test in test/xapi/delivery-sql.test.ts.
 */

type Endpoint = typeof xapiEndpoints.$inferSelect;
type OutboxEvent = typeof outboxEvents.$inferSelect;
type User = typeof users.$inferSelect;
type Lesson = typeof lessons.$inferSelect;
type Course = typeof courses.$inferSelect;

/**
 * The enabled endpoints of the institutions of the events in ?1 (a JSON array of event ids): who the
 * subscriber forwards to. Nothing when none of those institutions forwards.
 */
export const FORWARDING_ENDPOINTS_SQL = `SELECT id, institution_id, activities, actor_format FROM xapi_endpoints
  WHERE enabled = 1 AND institution_id IN (
    SELECT institution_id FROM outbox_events WHERE id IN (SELECT value FROM json_each(?1)))`;
/** A row of FORWARDING_ENDPOINTS_SQL: `activities` is the JSON text of the verbs it wants. */
export interface ForwardingEndpointRow {
  id: Endpoint["id"];
  institution_id: Endpoint["institutionId"];
  activities: string;
  actor_format: Endpoint["actorFormat"];
}

/**
 * The events in ?1 (a JSON array of ids) of the types in ?2 (a JSON array) whose institution has an
 * enabled endpoint: what the subscriber turns into facts.
 */
export const FORWARDED_EVENTS_SQL = `SELECT e.id, e.type, e.institution_id, e.user_id, e.payload, e.created_at FROM outbox_events e
  WHERE e.id IN (SELECT value FROM json_each(?1)) AND e.type IN (SELECT value FROM json_each(?2))
    AND EXISTS (SELECT 1 FROM xapi_endpoints x WHERE x.institution_id = e.institution_id AND x.enabled = 1)
  ORDER BY e.created_at, e.id`;
/** A row of FORWARDED_EVENTS_SQL: `payload` is the JSON text. */
export interface ForwardedEventRow {
  id: OutboxEvent["id"];
  type: OutboxEvent["type"];
  institution_id: string;
  user_id: OutboxEvent["userId"];
  payload: string;
  created_at: OutboxEvent["createdAt"];
}

/**
 * The attempts in ?1 (a JSON array of ids), each by primary key, with what their statements are built
 * from (statements/facts.ts `AttemptFact`), read as arrays (`raw()`) in this column order and made
 * facts by `attemptFactOf`: the subscriber reads 10,000 of them in a busy institution's burst.
 */
export const ATTEMPT_FACTS_SQL = `SELECT id, user_id, training_item_id, lesson_id, course_id, score, correct, duration_seconds, occurred_at, xp_awarded
  FROM attempts WHERE id IN (SELECT value FROM json_each(?1))`;
/** A row of ATTEMPT_FACTS_SQL, as `raw()` reads it. */
export type AttemptFactRow = [string, string, string, string, string, number, number, number, string, number];

export function attemptFactOf(row: AttemptFactRow): AttemptFact {
  const [
    id,
    userId,
    trainingItemId,
    lessonId,
    courseId,
    score,
    correct,
    durationSeconds,
    occurredAt,
    xpAwarded,
  ] = row;
  return {
    id,
    userId,
    trainingItemId,
    lessonId,
    courseId,
    score,
    correct: correct === 1,
    durationSeconds,
    occurredAt,
    xpAwarded,
  };
}

/**
 * The lessons still in progress with at least one item done, of the (user, lesson) pairs in ?1 (a
 * JSON array of [user, lesson]): the `progressed` facts of the attempts that touched them. The rows
 * are stored by numbers (docs/design/capacity.md, "Integer keys"): each pair's are found on the keys
 * of `users` and `lessons`, and the row answers with ids.
 */
export const LESSONS_IN_PROGRESS_SQL = `SELECT u.id AS user_id, l.id AS lesson_id, c.id AS course_id, lp.items_done, lp.items_total, lp.last_activity_at
  FROM (SELECT DISTINCT value ->> 0 AS user_id, value ->> 1 AS lesson_id FROM json_each(?1)) j
  CROSS JOIN users u ON u.id = j.user_id
  CROSS JOIN lessons l ON l.id = j.lesson_id
  CROSS JOIN lesson_progress lp ON lp.user_number = u.number AND lp.lesson_number = l.number
  JOIN courses c ON c.number = lp.course_number
  WHERE lp.status = 'in_progress' AND lp.items_done > 0`;
export interface LessonInProgressRow {
  user_id: User["id"];
  lesson_id: Lesson["id"];
  course_id: Course["id"];
  items_done: number;
  items_total: number;
  last_activity_at: string;
}

/**
 * An offer's commit is two statements in one D1 batch (one transaction): INSERT_STATEMENTS_SQL keys
 * each statement id to its batch, then INSERT_BATCHES_SQL makes the batches. Whether the first stored
 * every id is read from SQLite's `changes()` — the rows the statement before wrote, which D1 runs on
 * the same connection, in order —, so a first offer, where every id is new, never looks a key up
 * again: its 20 batches are one statement, not 20 and 50 key lookups each.
 */

/**
 * An offer's statement ids, ?1 a JSON array of [batch, [statement id, …]]: each keyed to the batch
 * that stores it. An id stored before (the same fact offered again: a redelivered event, a back-fill)
 * is skipped: its statement is not sent twice. Its `changes` say how many it stored: all of them in a
 * first offer, where nothing more is read; fewer, and KEYED_TO_BATCHES_SQL says which. One entry of a
 * `WITHOUT ROWID` b-tree per statement: no row, no other index (the log's entry is its batch's).
 */
export const INSERT_STATEMENTS_SQL = `INSERT INTO xapi_statement_keys (id, batch_id)
  SELECT s.value, b.value ->> 0 FROM json_each(?1) b, json_each(b.value, '$[1]') s WHERE true
  ON CONFLICT DO NOTHING`;

/**
 * Of the statements in ?1 (INSERT_STATEMENTS_SQL's parameter), the ids keyed to their very batch: the
 * statements the insert stored (a batch id is new with its offer, so no other offer keys to it).
 * Each by primary key.
 */
export const KEYED_TO_BATCHES_SQL = `SELECT k.id FROM json_each(?1) b, json_each(b.value, '$[1]') s
  CROSS JOIN xapi_statement_keys k ON k.id = s.value WHERE k.batch_id = b.value ->> 0`;

/**
 * The batches of an offer's commit, right after INSERT_STATEMENTS_SQL keyed their statements: ?1 a
 * JSON array of [batch, facts, entries], endpoint ?2, at ?3 (now), ?4 the lease, ?5 how many
 * statements they hold in all. Each batch's `facts` are statements/facts.ts `StoredFact`s and its
 * `entries` the log's entries of its statements, `[id, verb, activity, user, occurred_at]` in the
 * order they happened; they share its state, pending.
 *
 * When the keys' insert stored all ?5 (`changes()`: a first offer), each batch keeps its entries as
 * given, never parsed. Otherwise some were stored before (the same fact offered again) and each batch
 * keeps the entries of the statements whose key it made, each found by primary key, in the order
 * given; a batch that got none is not made. Its facts may hold one whose statement was stored before
 * in another batch: that one is not this batch's, so this batch never sends it.
 *
 * ?4 null: made untried, for the queue; ?4 a time (ms): made claimed until then by its first attempt
 * (attempt_count 1), which the offer makes itself with the statements in hand. No statement body is
 * stored: a later attempt builds them again from the facts. Returns the ids it made.
 */
export const INSERT_BATCHES_SQL = `WITH made AS MATERIALIZED (
    SELECT b.value ->> 0 AS id, b.value -> 1 AS facts,
      CASE WHEN changes() = ?5 THEN b.value -> 2 ELSE (
        SELECT json_group_array(json(value)) FROM (SELECT e.value FROM json_each(b.value, '$[2]') e
          CROSS JOIN xapi_statement_keys k ON k.id = e.value ->> 0 WHERE k.batch_id = b.value ->> 0 ORDER BY e.key)) END AS entries
    FROM json_each(?1) b)
  INSERT INTO xapi_batches (id, endpoint_id, status, attempt_count, claimed_until, facts, entries, statement_count, log_status, log_attempts, created_at)
  SELECT id, ?2, 'pending', CASE WHEN ?4 IS NULL THEN 0 ELSE 1 END, ?4, facts, entries, n, 'pending', 0, ?3
  FROM (SELECT id, facts, entries, json_array_length(entries) AS n FROM made) WHERE n > 0
  RETURNING id`;

/**
 * The untried batches holding any of the statements in ?1 (a JSON array of ids): asked by an offer
 * for the statements it found stored before, whose earlier offer may have stopped before queueing
 * their batches. Returns their ids.
 */
export const UNSENT_BATCHES_SQL = `SELECT DISTINCT b.id FROM xapi_statement_keys k JOIN xapi_batches b ON b.id = k.batch_id
  WHERE k.id IN (SELECT value FROM json_each(?1)) AND b.status = 'pending' AND b.attempt_count = 0
    AND b.claimed_until IS NULL`;

/**
 * The statements of the batches in ?1 (a JSON array of ids) that still share their batch's pending
 * state given rows of their own (pending, with its requests and error): the queue dead-lettered their
 * batch. Followed by FAIL_PENDING_OF_BATCHES_SQL and CLEAR_BODIES_OF_BATCHES_SQL in the same write.
 */
export const OWN_STATE_OF_BATCHES_SQL = `INSERT INTO xapi_statements (id, endpoint_id, batch_id, verb, activity_id, user_id, occurred_at, status, attempts, last_error, created_at)
  SELECT j.value ->> 0, b.endpoint_id, b.id, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, 'pending', b.log_attempts, b.log_error, b.created_at
  FROM xapi_batches b, json_each(b.entries) j
  WHERE b.id IN (SELECT value FROM json_each(?1)) AND b.log_status = 'pending'
  ON CONFLICT DO NOTHING`;

/**
 * The pending statements of the batches in ?1 (a JSON array of ids) failed with ?2 at ?3 (now): the
 * queue dead-lettered their batch (after OWN_STATE_OF_BATCHES_SQL gave each a row).
 */
export const FAIL_PENDING_OF_BATCHES_SQL = `UPDATE xapi_statements SET status = 'failed', last_error = ?2, completed_at = ?3
  WHERE id IN (SELECT j.value ->> 0 FROM xapi_batches n, json_each(n.entries) j WHERE n.id IN (SELECT value FROM json_each(?1)))
    AND batch_id IN (SELECT value FROM json_each(?1)) AND status = 'pending'`;

/**
 * The facts (and any bodies) of the batches in ?1 (a JSON array of ids) cleared: nothing of theirs is sent again; a
 * pending shared state is over (OWN_STATE_OF_BATCHES_SQL gave each statement its own).
 */
export const CLEAR_BODIES_OF_BATCHES_SQL = `UPDATE xapi_batches SET bodies = NULL, facts = NULL,
    log_status = CASE WHEN log_status = 'pending' THEN NULL ELSE log_status END
  WHERE id IN (SELECT value FROM json_each(?1))`;

/**
 * Enabled endpoints failing without a success since at least ?1 (now − 24 h, text) that were not
 * told about this failing run yet: the `xapi_endpoint.failing` candidates, at most ?2.
 */
export const FAILING_ENDPOINTS_SQL = `SELECT id, institution_id, name, failing_since, last_error FROM xapi_endpoints
  WHERE enabled = 1 AND failing_since IS NOT NULL AND failing_since <= ?1
    AND (failing_notified_at IS NULL OR failing_notified_at < failing_since)
  LIMIT ?2`;
export interface FailingEndpointRow {
  id: Endpoint["id"];
  institution_id: Endpoint["institutionId"];
  name: Endpoint["name"];
  failing_since: string;
  last_error: Endpoint["lastError"];
}

/**
 * Marks endpoint ?1's failing run (since ?2) notified at ?3, only if it is still that run and not
 * yet notified: of concurrent sweeps one changes the row, and only its event is written.
 */
export const MARK_FAILING_NOTIFIED_SQL = `UPDATE xapi_endpoints SET failing_notified_at = ?3
  WHERE id = ?1 AND failing_since = ?2 AND (failing_notified_at IS NULL OR failing_notified_at < failing_since)`;

/**
 * The finished batches of the log's window that ends at ?1 (text): made before it, at most ?2 of
 * them, walking each endpoint's (endpoint, created_at, id) index (CROSS JOIN keeps the endpoints
 * outer), never the whole table. The same batches in each of the purge's three statements (one D1
 * batch: nothing else writes between them, and only the last deletes batches).
 */
const PURGED_BATCHES = `SELECT b.id, b.entries FROM xapi_endpoints e CROSS JOIN xapi_batches b ON b.endpoint_id = e.id AND b.created_at < ?1
  WHERE b.status IN ('succeeded', 'failed') LIMIT ?2`;

/**
 * The keys of the statements of the batches PURGED_BATCHES names. Kept until then because the
 * back-fill's window (90 days) relies on them: a fact whose statement is still keyed is never offered
 * as a new statement, so an LRS never receives an id twice.
 */
export const PURGE_STATEMENT_KEYS_SQL = `DELETE FROM xapi_statement_keys WHERE id IN (
  SELECT j.value ->> 0 FROM (${PURGED_BATCHES}) p, json_each(p.entries) j) AND batch_id IN (SELECT id FROM (${PURGED_BATCHES}))`;

/** The statements with a state of their own of the batches PURGED_BATCHES names. */
export const PURGE_STATEMENTS_SQL = `DELETE FROM xapi_statements WHERE id IN (
  SELECT j.value ->> 0 FROM (${PURGED_BATCHES}) p, json_each(p.entries) j) AND batch_id IN (SELECT id FROM (${PURGED_BATCHES}))`;

/** The batches PURGED_BATCHES names, after their statements' keys and rows. */
export const PURGE_BATCHES_SQL = `DELETE FROM xapi_batches WHERE id IN (SELECT id FROM (${PURGED_BATCHES}))`;
