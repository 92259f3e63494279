import type { invitations, users } from "../../../db/schema";

/**
 * Bulk provisioning's raw SQL: statements that write or read many rows at once, each binding its rows
 * as one JSON array (`json_each(?1)`), since D1 binds at most 100 parameters per statement; and the
 * guards that fail a chunk's batch (SQLite's "malformed JSON" error, `isBatchGuardFailure`) when the
 * job or the seats moved under it. Bound with `ctx.d1.prepare(…).bind(…)` and handed to `commit` as
 * they are.
 */

type UserRow = typeof users.$inferSelect;
type InvitationRow = typeof invitations.$inferSelect;

// ---- Reading the institution's members (the planner's index) ----

/** Every member of institution ?1 with its groups (a JSON array, alphabetical): `IndexedMemberRow`s. */
export const MEMBER_INDEX = `SELECT u.id, u.email, u.name, u.role, u.status, u.external_id AS externalId,
  (SELECT json_group_array(group_name) FROM (SELECT group_name FROM member_groups g WHERE g.user_id = u.id ORDER BY 1)) AS groups
  FROM users u WHERE u.institution_id = ?`;
export type IndexedMemberRow = Pick<UserRow, "id" | "email" | "name" | "role" | "status" | "externalId"> & {
  /** JSON text of the member's group names. */
  groups: string;
};

/** Which of the e-mail addresses in the JSON array ?1 belong to any account: `{ email }` rows. */
export const EMAILS_TAKEN = "SELECT email FROM users WHERE email IN (SELECT value FROM json_each(?))";
export type TakenEmailRow = Pick<UserRow, "email">;

// ---- Applying a chunk (one batch) ----

/**
 * Fails the batch unless job ?1 is still `processing` at checkpoint ?2 and held by lease ?3: a chunk is
 * applied once, and only by the job's current holder.
 */
export const CHECKPOINT_GUARD = `SELECT json(CASE WHEN EXISTS (SELECT 1 FROM bulk_jobs WHERE id = ?1 AND next_row = ?2 AND status = 'processing' AND lease_id = ?3) THEN '1' ELSE 'guard failed' END)`;

/** Fails the batch when institution ?1's invited and active members outnumber its seats (null: no limit). */
export const SEAT_GUARD = `SELECT json(CASE WHEN (SELECT seats FROM institutions WHERE id = ?1) IS NULL
  OR (SELECT count(*) FROM users WHERE institution_id = ?1 AND status IN ('invited', 'active')) <= (SELECT seats FROM institutions WHERE id = ?1)
  THEN '1' ELSE 'guard failed' END)`;

/**
 * Inserts the members of JSON array ?1 (`{id, email, name, role, status, external_id}`) into
 * institution ?2, with password hash ?3 (the decoy: no usable password) and created/updated at ?4.
 */
export const INSERT_USERS = `INSERT INTO users (id, email, name, role, institution_id, password_hash, status, external_id, created_at, updated_at)
  SELECT value->>'id', value->>'email', value->>'name', value->>'role', ?2, ?3, value->>'status', value->>'external_id', ?4, ?4 FROM json_each(?1)`;

/** Inserts the invitations of JSON array ?1 (`{id (the user), hash, expires_at}`) of institution ?2, created at ?3. */
export const INSERT_INVITATIONS = `INSERT INTO invitations (user_id, institution_id, token_hash, expires_at, accepted_at, created_at)
  SELECT value->>'id', ?2, value->>'hash', value->>'expires_at', NULL, ?3 FROM json_each(?1)`;

/** Sets e-mail, name, role, status and external_id of the members of JSON array ?1 in institution ?2, updated at ?3. */
export const UPDATE_USERS = `UPDATE users SET email = j.email, name = j.name, role = j.role, status = j.status, external_id = j.external_id, updated_at = ?3
  FROM (SELECT value->>'id' AS id, value->>'email' AS email, value->>'name' AS name, value->>'role' AS role,
    value->>'status' AS status, value->>'external_id' AS external_id FROM json_each(?1)) AS j
  WHERE users.id = j.id AND users.institution_id = ?2`;

/** Deletes every group of the users in JSON array ?1 (before their new groups are inserted). */
export const DELETE_GROUPS = `DELETE FROM member_groups WHERE user_id IN (SELECT value FROM json_each(?1))`;

/** Inserts the `[user id, group name]` pairs of JSON array ?1 as groups of institution ?2. */
export const INSERT_GROUPS = `INSERT INTO member_groups (institution_id, user_id, group_name)
  SELECT ?2, value->>'$[0]', value->>'$[1]' FROM json_each(?1)`;

/** Revokes at ?2 every live token (sessions included) of the users in JSON array ?1. */
export const REVOKE_TOKENS = `UPDATE api_tokens SET revoked_at = ?2 WHERE revoked_at IS NULL AND user_id IN (SELECT value FROM json_each(?1))`;

/**
 * Inserts job ?2's report rows of JSON array ?1 (`{line, email, external_id, outcome, errors, user_id,
 * due, cells}`; errors and cells as nested JSON, stored as their text); a line already there is kept.
 */
export const INSERT_REPORT = `INSERT INTO bulk_job_rows (job_id, line, email, external_id, outcome, errors, user_id, invitation_due, cells)
  SELECT ?2, value->>'line', value->>'email', value->>'external_id', value->>'outcome', value->'errors', value->>'user_id', value->>'due',
    CASE WHEN value->>'cells' IS NULL THEN NULL ELSE value->'cells' END
  FROM json_each(?1) WHERE true ON CONFLICT DO NOTHING`;

/**
 * Moves job ?1 from checkpoint ?2 to ?3, adds ?4 created, ?5 updated, ?6 unchanged and ?7 rejected to
 * its counts, records heartbeat ?8 (ms) and renews its lease until ?9 (ms). Changes nothing if the job
 * is not at ?2.
 */
export const ADVANCE = `UPDATE bulk_jobs SET next_row = ?3, created = created + ?4, updated = updated + ?5, unchanged = unchanged + ?6,
  rejected = rejected + ?7, heartbeat_at = ?8, lease_until = ?9 WHERE id = ?1 AND next_row = ?2`;

// ---- Finishing a job (one batch) ----

/** Fails the batch unless job ?1 is `processing` with every row applied, and held by lease ?2. */
export const FINISH_GUARD = `SELECT json(CASE WHEN EXISTS (SELECT 1 FROM bulk_jobs WHERE id = ?1 AND next_row = total_rows AND status = 'processing' AND lease_id = ?2) THEN '1' ELSE 'guard failed' END)`;

/** Suspends, at ?3, the invited and active members of institution ?2 whose ids are in JSON array ?1. */
export const SUSPEND = `UPDATE users SET status = 'suspended', updated_at = ?3 WHERE institution_id = ?2 AND status IN ('invited', 'active') AND id IN (SELECT value FROM json_each(?1))`;

/** Completes `processing` job ?1: ?2 suspended, completed at ?3, heartbeat ?4 (ms); its file key and lease forgotten. */
export const COMPLETE = `UPDATE bulk_jobs SET status = 'completed', suspended = ?2, completed_at = ?3, heartbeat_at = ?4, r2_key = NULL, lease_id = NULL, lease_until = NULL WHERE id = ?1 AND status = 'processing'`;

// ---- A queued upload's invitations, on the report's first read ----

/**
 * Inserts the invitations of JSON array ?1 (`{line, user_id, hash, expires_at}`) for institution ?2,
 * created at ?3, each only while job ?4's row at that line is still due, its member still `invited`
 * with a role in JSON array ?5 (those the reader may grant), and without an invitation (a re-invite in
 * between wins). RETURNING the users whose invitation was inserted: `MintedDueRow`s.
 */
export const MINT_DUE = `INSERT INTO invitations (user_id, institution_id, token_hash, expires_at, accepted_at, created_at)
  SELECT value->>'user_id', ?2, value->>'hash', value->>'expires_at', NULL, ?3 FROM json_each(?1)
  WHERE EXISTS (SELECT 1 FROM bulk_job_rows r WHERE r.job_id = ?4 AND r.line = value->>'line' AND r.invitation_due)
    AND EXISTS (SELECT 1 FROM users u WHERE u.id = value->>'user_id' AND u.institution_id = ?2 AND u.status = 'invited'
      AND u.role IN (SELECT value FROM json_each(?5)))
    AND NOT EXISTS (SELECT 1 FROM invitations i WHERE i.user_id = value->>'user_id')
  RETURNING user_id`;
export interface MintedDueRow {
  user_id: InvitationRow["userId"];
}

/**
 * Clears the due flag of job ?1's rows at the lines of JSON array ?2, except rows whose member is
 * still invited with a role outside JSON array ?3 (they stay due, for a reader who may issue them).
 */
export const CLEAR_DUE = `UPDATE bulk_job_rows SET invitation_due = false
  WHERE job_id = ?1 AND invitation_due AND line IN (SELECT value FROM json_each(?2))
    AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = bulk_job_rows.user_id AND u.status = 'invited'
      AND u.role NOT IN (SELECT value FROM json_each(?3)))`;

// ---- Re-issuing a finished upload's invitations (one batch, then the first page minted) ----

/**
 * Marks due again the rows of job ?1 that created a member still `invited` in institution ?2 with a
 * role in JSON array ?3 (those the caller may invite): their invitations are minted afresh when the
 * row is next read. RETURNING their lines and members: `ReissuedRow`s.
 */
export const REISSUE_MARK = `UPDATE bulk_job_rows SET invitation_due = true
  WHERE job_id = ?1 AND outcome = 'created' AND user_id IN (SELECT id FROM users
    WHERE institution_id = ?2 AND status = 'invited' AND role IN (SELECT value FROM json_each(?3)))
  RETURNING line, user_id`;
export interface ReissuedRow {
  line: number;
  user_id: string;
}

/**
 * Deletes the open (not accepted) invitations of the members REISSUE_MARK marks (same ?1, ?2, ?3):
 * their old links stop working, as after a re-invite, and MINT_DUE may insert new ones.
 */
export const REISSUE_REVOKE = `DELETE FROM invitations WHERE accepted_at IS NULL AND user_id IN (
  SELECT r.user_id FROM bulk_job_rows r JOIN users u ON u.id = r.user_id
  WHERE r.job_id = ?1 AND r.outcome = 'created' AND u.institution_id = ?2 AND u.status = 'invited'
    AND u.role IN (SELECT value FROM json_each(?3)))`;

/**
 * Why the other members job ?1 created were not re-issued, counted: no longer members of institution
 * ?2 (removed), active (accepted their invitation), suspended, or invited with a role outside JSON
 * array ?3. One `ReissueSkippedRow`.
 */
export const REISSUE_SKIPPED = `SELECT
  coalesce(sum(u.id IS NULL OR u.institution_id IS NOT ?2), 0) AS removed,
  coalesce(sum(u.institution_id = ?2 AND u.status = 'active'), 0) AS accepted,
  coalesce(sum(u.institution_id = ?2 AND u.status = 'suspended'), 0) AS suspended,
  coalesce(sum(u.institution_id = ?2 AND u.status = 'invited' AND u.role NOT IN (SELECT value FROM json_each(?3))), 0) AS role_above_yours
  FROM bulk_job_rows r LEFT JOIN users u ON u.id = r.user_id
  WHERE r.job_id = ?1 AND r.outcome = 'created' AND r.user_id IS NOT NULL`;
export interface ReissueSkippedRow {
  removed: number;
  accepted: number;
  suspended: number;
  role_above_yours: number;
}
