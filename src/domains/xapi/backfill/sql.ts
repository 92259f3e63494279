import type { xapiStatements } from "../../../db/schema";
import type { ForwardedEventRow } from "../delivery/sql";

/**
 * The back-fill's raw SQL: the conditional start (one active back-fill per endpoint, an enabled
 * endpoint of the caller's institution), the re-queueing of failed statements, a chunk at a time
 * under the job's lease, and the page of CEFR changes (the other sources are drizzle queries). Ids and rows travel as one JSON parameter (D1 binds at most 100 per
 * statement). Each statement has a test in test/xapi/backfill-sql.test.ts.
 */

type Statement = typeof xapiStatements.$inferSelect;

/**
 * Starts back-fill ?1 of endpoint ?2 — only if the endpoint belongs to institution ?3 and is enabled,
 * and (the partial unique index `xapi_backfills_one_active_idx`) no other back-fill of it is queued
 * or running: `queued`, since ?4, until and created at ?5, its first message due (lease_until ?6,
 * heartbeat ?7, ms), by user ?8. Returns the id when it started; nothing otherwise.
 */
export const START_BACKFILL_SQL = `INSERT INTO xapi_backfills (id, endpoint_id, since, until, status, cursor, statements_queued, generation, lease_id, lease_until, heartbeat_at, error, created_by, created_at, completed_at)
  SELECT ?1, e.id, ?4, ?5, 'queued', NULL, 0, 0, NULL, ?6, ?7, NULL, ?8, ?5, NULL FROM xapi_endpoints e
  WHERE e.id = ?2 AND e.institution_id = ?3 AND e.enabled = 1
  ON CONFLICT DO NOTHING
  RETURNING id`;

/**
 * The failed statements of endpoint ?1 a back-fill sends again, after the keyset (?2 completed_at,
 * ?3 id; both null: from the start), at most ?4: the activity happened from ?5 (since) to ?6
 * (until), both included, the failure came before the back-fill started (completed_at <= ?6), the
 * verb is one of ?7 (a JSON array: what the endpoint forwards now), the LRS did not reject the
 * statement itself (a `400` or a `413` for it alone: it would be rejected again), its learner is
 * still a member of institution ?8, and a `mastered` one is no older than ?9 (the outbox keeps the
 * level changes 30 days): exactly the statements whose facts the back-fill's sources read again.
 * Walks `xapi_statements_health_idx`.
 */
export const FAILED_STATEMENTS_SQL = `SELECT id, completed_at FROM xapi_statements
  WHERE endpoint_id = ?1 AND status = 'failed' AND completed_at <= ?6
    AND (?2 IS NULL OR (completed_at, id) > (?2, ?3))
    AND occurred_at >= ?5 AND occurred_at <= ?6
    AND verb IN (SELECT value FROM json_each(?7))
    AND coalesce(last_error, '') NOT LIKE 'HTTP 400%' AND coalesce(last_error, '') NOT LIKE 'HTTP 413%'
    AND EXISTS (SELECT 1 FROM users u WHERE u.id = xapi_statements.user_id AND u.institution_id = ?8)
    AND (verb <> 'mastered' OR occurred_at >= ?9)
  ORDER BY completed_at, id
  LIMIT ?4`;
export interface FailedStatementRow {
  id: Statement["id"];
  completed_at: string;
}

/**
 * The guard of a back-fill chunk's batch: fails the whole D1 batch (malformed JSON) unless back-fill
 * ?1 is still running under lease ?2 at generation ?3.
 */
export const BACKFILL_HELD_GUARD = `SELECT json(CASE WHEN EXISTS (SELECT 1 FROM xapi_backfills WHERE id = ?1 AND lease_id = ?2 AND generation = ?3 AND status = 'running') THEN '1' ELSE 'guard failed' END)`;

/**
 * The failed statements of ?1 (a JSON array of statement ids) of endpoint ?2, each only while it is
 * still failed: what FORGET_FAILED_SQL forgets.
 */
const FORGOTTEN = `SELECT f.id FROM xapi_statements f
  WHERE f.endpoint_id = ?2 AND f.status = 'failed' AND f.id IN (SELECT value FROM json_each(?1))`;

/**
 * Forgetting failed statements, first: their entries taken out of the batches that name them (so an
 * id is named by one batch only, the one its key says, once offered again), in their order.
 */
export const FORGET_FAILED_ENTRIES_SQL = `UPDATE xapi_batches
  SET entries = (SELECT json_group_array(json(e.value)) FROM (SELECT j.value FROM json_each(xapi_batches.entries) j
      WHERE j.value ->> 0 NOT IN (${FORGOTTEN}) ORDER BY j.key) e),
    statement_count = statement_count - (SELECT count(*) FROM xapi_statements f
      WHERE f.batch_id = xapi_batches.id AND f.id IN (${FORGOTTEN}))
  WHERE id IN (SELECT f.batch_id FROM xapi_statements f WHERE f.id IN (${FORGOTTEN}))`;

/** Forgetting failed statements, second: their keys (FORGET_FAILED_ENTRIES_SQL first). */
export const FORGET_FAILED_KEYS_SQL = `DELETE FROM xapi_statement_keys WHERE id IN (${FORGOTTEN})`;

/**
 * Forgets failed statements so that the back-fill's fact sources, read after them, offer their
 * facts again: ?1 a JSON array of statement ids of endpoint ?2, each deleted only while it is still
 * failed (after FORGET_FAILED_ENTRIES_SQL and FORGET_FAILED_KEYS_SQL, in the same write). Its facts
 * went with its batch; offered again, it is built again, to the same id, in a new batch.
 */
export const FORGET_FAILED_SQL = `DELETE FROM xapi_statements WHERE id IN (${FORGOTTEN})`;

/** Checkpoint of back-fill ?1 (held by lease ?2) after forgetting: cursor ?3 (JSON text); the lease renewed to ?4, the heartbeat ?5 (ms). */
export const FORGET_CHECKPOINT_SQL = `UPDATE xapi_backfills SET cursor = ?3, lease_until = ?4, heartbeat_at = ?5
  WHERE id = ?1 AND lease_id = ?2 AND status = 'running'`;

/**
 * A page of institution ?1's `cefr.level_changed` events from ?2 to ?3 (both included) after the
 * keyset (?4 created_at, ?5 id; '' and '' for the first page), at most ?6, of users still members of
 * the institution: the `mastered` source. A range of outbox_events_type_idx, named because without
 * statistics the planner prefers the institution's index and walks every event type of the window.
 */
export const LEVEL_CHANGES_SQL = `SELECT e.id, e.type, e.institution_id, e.user_id, e.payload, e.created_at
  FROM outbox_events e INDEXED BY outbox_events_type_idx
  WHERE e.institution_id = ?1 AND e.type = 'cefr.level_changed' AND e.created_at >= ?2 AND e.created_at <= ?3
    AND (e.created_at, e.id) > (?4, ?5)
    AND EXISTS (SELECT 1 FROM users u WHERE u.id = e.user_id AND u.institution_id = ?1)
  ORDER BY e.created_at, e.id
  LIMIT ?6`;
export type LevelChangeRow = ForwardedEventRow;
