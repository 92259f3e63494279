/** The delivery engine's statements over a target's table (its name is the target's own constant). */

export const claimSql = (table: string) =>
  `UPDATE ${table} SET claimed_until = ?1, attempt_count = attempt_count + 1
  WHERE id IN (SELECT value FROM json_each(?2)) AND status IN ('pending', 'retrying')
    AND (claimed_until IS NULL OR claimed_until < ?3) AND (next_attempt_at IS NULL OR next_attempt_at <= ?4)
  RETURNING id, attempt_count AS attempt`;
export const stateSql = (table: string) =>
  `SELECT id, status, claimed_until, next_attempt_at FROM ${table} WHERE id IN (SELECT value FROM json_each(?1))`;
export const deadLetterSql = (table: string) =>
  `UPDATE ${table} SET status = 'failed', claimed_until = NULL, last_error = ?1, completed_at = ?2
  WHERE id IN (SELECT value FROM json_each(?3)) AND status IN ('pending', 'retrying')`;

/**
 * Work whose message was lost (platform/jobs/lease.ts): open, no attempt holding it (its claim is the
 * attempt's lease), and due (`next_attempt_at`, or since it was created) more than the grace ago. Its
 * due time is moved to now (so concurrent sweeps take it once) and its ids returned.
 */
export const lostSql = (table: string) =>
  `UPDATE ${table} SET next_attempt_at = ?1 WHERE id IN (SELECT id FROM ${table}
    WHERE status IN ('pending', 'retrying') AND (claimed_until IS NULL OR claimed_until < ?1)
      AND (next_attempt_at < ?2 OR (next_attempt_at IS NULL AND created_at < ?3)) LIMIT ?4)
  RETURNING id`;

/** Un-claims first attempts the deadline stopped before they were sent (still attempt 1, that claim). */
export const releaseSql = (table: string) =>
  `UPDATE ${table} SET attempt_count = 0, claimed_until = NULL
  WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'pending' AND attempt_count = 1 AND claimed_until = ?2`;
