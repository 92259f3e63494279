import type { xapiEndpoints, xapiStatements } from "../../db/schema";

/**
 * The xAPI domain's raw SQL: the insert that checks the institution's limit in the same statement,
 * and the health of a page of endpoints in one statement. Each statement has a test in
 * test/xapi/sql.test.ts.
 */

type Endpoint = typeof xapiEndpoints.$inferSelect;
type Statement = typeof xapiStatements.$inferSelect;

/**
 * A new endpoint, only while its institution has fewer than ?17 (checked inside the INSERT, so
 * concurrent creations cannot overshoot it). Binds ?1 id, ?2 institution, ?3 name, ?4 endpoint URL,
 * ?5 version, ?6 auth type, ?7 username, ?8 token URL, ?9 client id, ?10 scope, ?11 sealed secret,
 * ?12 activities (JSON), ?13 actor format, ?14 enabled (0/1), ?15 created by, ?16 now (created and
 * updated), ?17 the limit. Changes 1 row or 0.
 */
export const CREATE_ENDPOINT_SQL = `INSERT INTO xapi_endpoints (id, institution_id, name, endpoint, version, auth_type, username, token_url, client_id, scope,
    secret_sealed, credentials_version, activities, actor_format, enabled, created_by, created_at, updated_at)
  SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 1, ?12, ?13, ?14, ?15, ?16, ?16
  WHERE (SELECT count(*) FROM xapi_endpoints WHERE institution_id = ?2) < ?17`;

/**
 * Per endpoint of ?1 (a JSON array of ids): statements sent and failed since ?2 (completed_at, ISO
 * text) and pending however old. Those with a state of their own are counted on their rows (a range
 * of the partial xapi_statements_health_idx: endpoint_id, status, completed_at), those sharing their
 * batch's on the batches (statement_count over a range of the partial xapi_batches_log_idx:
 * endpoint_id, log_status, completed_at). A failed statement always has its own state. One row per
 * id, in no particular order.
 */
export const ENDPOINT_HEALTH_SQL = `SELECT e.value AS endpoint_id,
    (SELECT count(*) FROM xapi_statements s WHERE s.endpoint_id = e.value AND s.status = 'sent' AND s.completed_at >= ?2)
      + (SELECT coalesce(sum(b.statement_count), 0) FROM xapi_batches b WHERE b.endpoint_id = e.value AND b.log_status = 'sent' AND b.completed_at >= ?2) AS sent,
    (SELECT count(*) FROM xapi_statements s WHERE s.endpoint_id = e.value AND s.status = 'failed' AND s.completed_at >= ?2) AS failed,
    (SELECT count(*) FROM xapi_statements s WHERE s.endpoint_id = e.value AND s.status = 'pending')
      + (SELECT coalesce(sum(b.statement_count), 0) FROM xapi_batches b WHERE b.endpoint_id = e.value AND b.log_status = 'pending') AS pending
  FROM json_each(?1) e`;
/** A row of ENDPOINT_HEALTH_SQL. */
export interface EndpointHealthRow {
  endpoint_id: Endpoint["id"] & Statement["endpointId"];
  sent: number;
  failed: number;
  pending: number;
}
