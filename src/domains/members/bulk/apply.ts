import type { Env } from "../../../env";
import { jsonArrays } from "../../../platform/batch";
import { DECOY_PASSWORD_HASH } from "../../../platform/crypto/passwords";
import type { OutboxRow } from "../../../platform/events";
import { memberCreated, memberUpdated } from "../events";
import { mintInvitation } from "../invitations";
import type { PlannedRow } from "./plan";

/** What one applied chunk adds to the job's counts. */
export interface ChunkCounts {
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
}

export interface ChunkResult {
  counts: ChunkCounts;
  eventIds: string[];
  /** Users whose cached principals must be re-read (role changed) or whose tokens were revoked (suspended). */
  roleChanged: string[];
  suspended: string[];
  /** Invitation tokens of created members, by line, to show in the answer. */
  invitations: Map<number, string>;
}

export interface ChunkTarget {
  jobId: string;
  institutionId: string;
  /** Checkpoint before and after this chunk. */
  fromRow: number;
  toRow: number;
  dryRun: boolean;
  /**
   * `mint`: invitations are minted with the chunk and answered by the caller (uploads applied within
   * the request). `defer`: the report row is marked and the invitation minted when it is first read
   * (queued uploads, whose report is read later) — see report-invitations.ts.
   */
  invitations: "mint" | "defer";
  now: string;
}

/** Fails the batch unless the job is still at this chunk's checkpoint: a chunk is applied once. */
const CHECKPOINT_GUARD = `SELECT json(CASE WHEN EXISTS (SELECT 1 FROM bulk_jobs WHERE id = ?1 AND next_row = ?2 AND status = 'processing') THEN '1' ELSE 'guard failed' END)`;
const SEAT_GUARD = `SELECT json(CASE WHEN (SELECT seats FROM institutions WHERE id = ?1) IS NULL
  OR (SELECT count(*) FROM users WHERE institution_id = ?1 AND status IN ('invited', 'active')) <= (SELECT seats FROM institutions WHERE id = ?1)
  THEN '1' ELSE 'guard failed' END)`;

// Many rows per statement, each statement binding a handful of parameters: the rows travel as one
// JSON array (D1 binds at most 100 parameters per statement).
const INSERT_USERS = `INSERT INTO users (id, email, name, role, institution_id, password_hash, status, external_id, created_at, updated_at)
  SELECT value->>'id', value->>'email', value->>'name', value->>'role', ?2, ?3, value->>'status', value->>'external_id', ?4, ?4 FROM json_each(?1)`;
const INSERT_INVITATIONS = `INSERT INTO invitations (user_id, institution_id, token_hash, expires_at, accepted_at, created_at)
  SELECT value->>'id', ?2, value->>'hash', value->>'expires_at', NULL, ?3 FROM json_each(?1)`;
const UPDATE_USERS = `UPDATE users SET email = j.email, name = j.name, role = j.role, status = j.status, external_id = j.external_id, updated_at = ?3
  FROM (SELECT value->>'id' AS id, value->>'email' AS email, value->>'name' AS name, value->>'role' AS role,
    value->>'status' AS status, value->>'external_id' AS external_id FROM json_each(?1)) AS j
  WHERE users.id = j.id AND users.institution_id = ?2`;
const DELETE_GROUPS = `DELETE FROM member_groups WHERE user_id IN (SELECT value FROM json_each(?1))`;
const INSERT_GROUPS = `INSERT INTO member_groups (institution_id, user_id, group_name)
  SELECT ?2, value->>'$[0]', value->>'$[1]' FROM json_each(?1)`;
const REVOKE_TOKENS = `UPDATE api_tokens SET revoked_at = ?2 WHERE revoked_at IS NULL AND user_id IN (SELECT value FROM json_each(?1))`;
// JSON columns travel as nested JSON and are stored as the text of that part (`->`), not as strings
// encoded twice.
export const INSERT_EVENTS = `INSERT INTO outbox_events (id, type, institution_id, user_id, payload, created_at)
  SELECT value->>'id', value->>'type', ?2, value->>'user_id', value->'payload', ?3 FROM json_each(?1)`;
const INSERT_REPORT = `INSERT INTO bulk_job_rows (job_id, line, email, external_id, outcome, errors, user_id, invitation_due, cells)
  SELECT ?2, value->>'line', value->>'email', value->>'external_id', value->>'outcome', value->'errors', value->>'user_id', value->>'due',
    CASE WHEN value->>'cells' IS NULL THEN NULL ELSE value->'cells' END
  FROM json_each(?1) WHERE true ON CONFLICT DO NOTHING`;
const ADVANCE = `UPDATE bulk_jobs SET next_row = ?3, created = created + ?4, updated = updated + ?5, unchanged = unchanged + ?6,
  rejected = rejected + ?7, heartbeat_at = ?8 WHERE id = ?1 AND next_row = ?2`;

function countOutcomes(planned: readonly PlannedRow[]): ChunkCounts {
  const counts: ChunkCounts = { created: 0, updated: 0, unchanged: 0, rejected: 0 };
  for (const p of planned) counts[p.outcome] += 1;
  return counts;
}

/** The rows of one chunk as the JSON arrays its statements bind, and what the caller needs afterwards. */
interface ChunkPayload {
  result: ChunkResult;
  created: object[];
  invitations: object[];
  updated: object[];
  regrouped: string[];
  groupPairs: [string, string][];
  events: OutboxRow[];
  report: object[];
  takesSeats: boolean;
}

const memberJson = (m: NonNullable<PlannedRow["member"]>) => ({
  id: m.id,
  email: m.email,
  name: m.name,
  role: m.role,
  status: m.status,
  external_id: m.externalId,
});

async function collectChunk(target: ChunkTarget, planned: readonly PlannedRow[]): Promise<ChunkPayload> {
  const { institutionId, now } = target;
  const payload: ChunkPayload = {
    result: {
      counts: countOutcomes(planned),
      eventIds: [],
      roleChanged: [],
      suspended: [],
      invitations: new Map(),
    },
    created: [],
    invitations: [],
    updated: [],
    regrouped: [],
    groupPairs: [],
    events: [],
    report: [],
    takesSeats: false,
  };
  const { result } = payload;
  const minting: Promise<void>[] = [];
  for (const p of planned) {
    const m = p.member;
    let due = false;
    if (m && p.outcome === "created") {
      payload.created.push(memberJson(m));
      for (const g of m.groups) payload.groupPairs.push([m.id, g]);
      payload.events.push(memberCreated(institutionId, m, now));
      if (m.status === "invited") payload.takesSeats = true;
      if (m.status === "invited" && !target.dryRun) {
        if (target.invitations === "defer") due = true;
        else minting.push(mintFor(payload, m.id, p.row.line));
      }
    } else if (m && p.outcome === "updated" && p.changes) {
      payload.updated.push(memberJson(m));
      if (p.changes.groups) {
        payload.regrouped.push(m.id);
        for (const g of m.groups) payload.groupPairs.push([m.id, g]);
      }
      if (p.changes.role) result.roleChanged.push(m.id);
      if (p.changes.status?.to === "suspended") result.suspended.push(m.id);
      if (p.changes.status?.from === "suspended") payload.takesSeats = true;
      payload.events.push(memberUpdated(institutionId, m.id, p.changes, now));
    }
    payload.report.push({
      line: p.row.line,
      email: p.row.email,
      external_id: p.row.externalId,
      outcome: p.outcome,
      errors: p.errors,
      user_id: m?.id ?? null,
      due: due ? 1 : 0,
      cells: p.outcome === "rejected" ? p.row.cells : null,
    });
  }
  // Hashing is asynchronous in WebCrypto: the chunk's tokens are minted side by side.
  await Promise.all(minting);
  return payload;
}

async function mintFor(payload: ChunkPayload, userId: string, line: number): Promise<void> {
  const invitation = await mintInvitation();
  payload.invitations.push({ id: userId, hash: invitation.tokenHash, expires_at: invitation.expiresAt });
  payload.result.invitations.set(line, invitation.token);
}

function memberStatements(d1: D1Database, target: ChunkTarget, payload: ChunkPayload): D1PreparedStatement[] {
  const { institutionId, now } = target;
  const statements: D1PreparedStatement[] = [];
  // One statement per JSON array of rows; more than one when the rows outgrow D1's 2 MB per value.
  const each = (sql: string, rows: readonly unknown[], ...values: unknown[]) => {
    for (const array of jsonArrays(rows)) statements.push(d1.prepare(sql).bind(array, ...values));
  };
  each(INSERT_USERS, payload.created, institutionId, DECOY_PASSWORD_HASH, now);
  each(INSERT_INVITATIONS, payload.invitations, institutionId, now);
  each(UPDATE_USERS, payload.updated, institutionId, now);
  each(DELETE_GROUPS, payload.regrouped);
  each(INSERT_GROUPS, payload.groupPairs, institutionId);
  each(REVOKE_TOKENS, payload.result.suspended, now);
  const events = payload.events.map((e) => ({
    id: e.id,
    type: e.type,
    user_id: e.userId,
    payload: e.payload,
  }));
  each(INSERT_EVENTS, events, institutionId, now);
  payload.result.eventIds = payload.events.map((e) => e.id);
  if (payload.takesSeats) statements.push(d1.prepare(SEAT_GUARD).bind(institutionId));
  return statements;
}

/**
 * Writes one planned chunk in one D1 batch: members, groups, invitations, revoked tokens, outbox
 * events, the report rows and the checkpoint. The first statement fails the batch when the job is
 * no longer at `fromRow`, so a chunk delivered twice (or raced) is applied once. A dry run writes only
 * the report and the checkpoint.
 */
export async function applyChunk(
  env: Env,
  target: ChunkTarget,
  planned: readonly PlannedRow[],
): Promise<ChunkResult> {
  const d1 = env.DB;
  const payload = await collectChunk(target, planned);
  const c = payload.result.counts;
  await d1.batch([
    d1.prepare(CHECKPOINT_GUARD).bind(target.jobId, target.fromRow),
    ...(target.dryRun ? [] : memberStatements(d1, target, payload)),
    ...jsonArrays(payload.report).map((array) => d1.prepare(INSERT_REPORT).bind(array, target.jobId)),
    d1
      .prepare(ADVANCE)
      .bind(
        target.jobId,
        target.fromRow,
        target.toRow,
        c.created,
        c.updated,
        c.unchanged,
        c.rejected,
        Date.now(),
      ),
  ]);
  return payload.result;
}
