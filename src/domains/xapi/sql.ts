import { sql } from "drizzle-orm";
import { xapiBatches, xapiEndpoints, xapiStatementKeys, type xapiStatements } from "../../db/schema";
import type { Database } from "../../platform/db";

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

/**
 * The forwarding log's rows of endpoint ?1, from its batches' packed `entries`: each statement with
 * its batch's state while it shares it, or its own row's (a batch whose `log_status` is null has a
 * row for each). Filters: ?2 a status or null, ?3 a verb or null; a sharing batch of another status
 * is skipped without reading its entries. Newest first: by batch (created_at, id, over
 * xapi_batches_endpoint_idx), then the latest-happened first within a batch. ?4 limit, ?5 offset.
 */
export const LOG_PAGE_SQL = `SELECT j.value ->> 0 AS id, j.value ->> 1 AS verb, j.value ->> 2 AS activity_id,
    j.value ->> 3 AS user_id, j.value ->> 4 AS occurred_at,
    coalesce(s.status, b.log_status, 'pending') AS status,
    CASE WHEN b.log_status IS NULL THEN coalesce(s.attempts, 0) ELSE b.log_attempts END AS attempts,
    CASE WHEN b.log_status IS NULL THEN s.last_error ELSE b.log_error END AS last_error,
    CASE WHEN b.log_status IS NULL THEN s.sent_at WHEN b.log_status = 'sent' THEN b.completed_at END AS sent_at,
    b.created_at
  FROM xapi_batches b JOIN json_each(b.entries) j
    LEFT JOIN xapi_statements s ON b.log_status IS NULL AND s.id = j.value ->> 0
  WHERE b.endpoint_id = ?1
    AND (?2 IS NULL OR b.log_status IS NULL OR b.log_status = ?2)
    AND (?2 IS NULL OR coalesce(s.status, b.log_status, 'pending') = ?2)
    AND (?3 IS NULL OR j.value ->> 1 = ?3)
  ORDER BY b.created_at DESC, b.id DESC, j.key DESC
  LIMIT ?4 OFFSET ?5`;
/** A row of LOG_PAGE_SQL. */
export interface LogRow {
  id: Statement["id"];
  verb: Statement["verb"];
  activity_id: Statement["activityId"];
  user_id: Statement["userId"];
  occurred_at: Statement["occurredAt"];
  status: NonNullable<Statement["status"]>;
  attempts: number;
  last_error: string | null;
  sent_at: string | null;
  created_at: string;
}

/**
 * How many rows LOG_PAGE_SQL has under the same filters (?1 endpoint, ?2 status or null, ?3 verb or
 * null). Without a verb, no entry is read: the batches' `statement_count` (the sharing ones of the
 * status, with a status) and, with a status, the rows holding their own (a range of
 * xapi_statements_health_idx). With a verb, the entries are read (a sharing batch of another status
 * skipped).
 */
export const LOG_TOTAL_SQL = `SELECT CASE WHEN ?3 IS NULL THEN
      (SELECT coalesce(sum(b.statement_count), 0) FROM xapi_batches b
        WHERE b.endpoint_id = ?1 AND (?2 IS NULL OR b.log_status = ?2))
      + CASE WHEN ?2 IS NULL THEN 0 ELSE
        (SELECT count(*) FROM xapi_statements s WHERE s.endpoint_id = ?1 AND s.status = ?2) END
    ELSE
      (SELECT count(*) FROM xapi_batches b JOIN json_each(b.entries) j
          LEFT JOIN xapi_statements s ON b.log_status IS NULL AND s.id = j.value ->> 0
        WHERE b.endpoint_id = ?1
          AND (?2 IS NULL OR b.log_status IS NULL OR b.log_status = ?2)
          AND (?2 IS NULL OR coalesce(s.status, b.log_status, 'pending') = ?2)
          AND j.value ->> 1 = ?3)
    END AS total`;

/**
 * The statement keys of endpoint `endpointId` of institution `institutionId` (those its batches'
 * entries name, each by primary key), deleted with the endpoint: the keys have no foreign key (an
 * index on their batch would cost every statement written), so the cascade that takes its batches
 * and statement rows does not reach them. Nothing for another institution's endpoint.
 */
export function deleteEndpointKeysQuery(db: Database, institutionId: string, endpointId: string) {
  return db.delete(xapiStatementKeys).where(
    sql`${xapiStatementKeys.id} IN (SELECT j.value ->> 0 FROM ${xapiBatches} b, json_each(b.entries) j
      WHERE b.endpoint_id = ${endpointId} AND EXISTS (SELECT 1 FROM ${xapiEndpoints} e
        WHERE e.id = ${endpointId} AND e.institution_id = ${institutionId}))`,
  );
}
