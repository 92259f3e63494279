import type { Role } from "../../../db/schema";
import type { Env } from "../../../env";
import { isBatchGuardFailure, jsonArrays } from "../../../platform/batch";
import { database } from "../../../platform/db";
import { publishEvents } from "../../../platform/events";
import { nowIso } from "../../../platform/ids";
import { memberUpdated } from "../events";
import { refreshPrincipals, revokeGates } from "../principal-refresh";
import { tokensRevokedAt } from "../token-revocation";
import { applyChunk, type ChunkResult, INSERT_EVENTS } from "./apply";
import type { CsvRow, ParsedCsv } from "./csv";
import { type BulkJob, findJob } from "./jobs";
import { emailsTakenElsewhere, type IndexedMember, MemberIndex, type PlannedRow, planRows } from "./plan";

export interface RunOptions {
  chunkRows: number;
  /** Stop starting new chunks after this instant (ms); the caller hands over. */
  deadline: number;
  /** How created members get their invitations: minted with each chunk, or on the report's first read. */
  invitations: "mint" | "defer";
  /** Keep every planned row and invitation (in-request uploads answer with them). */
  collect: boolean;
}

export interface RunOutcome {
  /** `done`: finished and completed; `continue`: checkpoint saved, more to do; `lost`: somebody else moved the job. */
  state: "done" | "continue" | "lost";
  job: BulkJob;
  planned: PlannedRow[];
  invitations: Map<number, string>;
}

async function seatsOf(env: Env, institutionId: string): Promise<number | null> {
  const row = await env.DB.prepare("SELECT seats FROM institutions WHERE id = ?")
    .bind(institutionId)
    .first<{ seats: number | null }>();
  return row?.seats ?? null;
}

/** After a chunk is committed: gates re-read or drop what changed, and the events go out. */
async function afterChunk(env: Env, result: ChunkResult, now: string): Promise<void> {
  const db = database(env.DB);
  if (result.suspended.length > 0) await revokeGates(env, await tokensRevokedAt(db, result.suspended, now));
  for (const userId of result.roleChanged) await refreshPrincipals(env, { userId });
  if (result.eventIds.length > 0) await publishEvents(env, result.eventIds);
}

/**
 * Applies the job's rows from its checkpoint, chunk by chunk, until done or past the deadline. The
 * members are read once into memory; when a chunk's batch is refused (another writer took the seats
 * or the job moved on) the job is read again: moved on means this invocation stops, otherwise the
 * members are read again and the chunk planned afresh, once.
 */
export async function runJob(
  env: Env,
  job: BulkJob,
  parsed: ParsedCsv,
  options: RunOptions,
): Promise<RunOutcome> {
  const db = database(env.DB);
  const context = { uploaderRole: job.uploaderRole as Role, seats: await seatsOf(env, job.institutionId) };
  let index = await MemberIndex.load(env.DB, job.institutionId);
  const planned: PlannedRow[] = [];
  const invitations = new Map<number, string>();
  let current = job;
  let retried = false;
  while (current.nextRow < current.totalRows) {
    const toRow = Math.min(current.totalRows, current.nextRow + options.chunkRows);
    const rows = parsed.rows.slice(current.nextRow, toRow);
    const taken = await emailsTakenElsewhere(
      env.DB,
      index,
      rows.map((r) => r.email),
    );
    const chunk = planRows(rows, index, context, taken);
    const now = nowIso();
    let result: ChunkResult;
    try {
      result = await applyChunk(
        env,
        {
          jobId: job.id,
          institutionId: job.institutionId,
          fromRow: current.nextRow,
          toRow,
          dryRun: job.dryRun,
          invitations: options.invitations,
          now,
        },
        chunk,
      );
    } catch (error) {
      const fresh = await findJob(db, job.id);
      if (fresh?.status !== "processing" || fresh.nextRow !== current.nextRow) {
        return { state: "lost", job: fresh ?? current, planned, invitations };
      }
      if (retried || !isBatchGuardFailure(error)) throw error;
      // The seat guard: members changed under the plan. Read them again and plan the chunk afresh.
      retried = true;
      index = await MemberIndex.load(env.DB, job.institutionId);
      context.seats = await seatsOf(env, job.institutionId);
      continue;
    }
    retried = false;
    await afterChunk(env, result, now);
    if (options.collect) {
      planned.push(...chunk);
      for (const [line, token] of result.invitations) invitations.set(line, token);
    }
    current = {
      ...current,
      nextRow: toRow,
      created: current.created + result.counts.created,
      updated: current.updated + result.counts.updated,
      unchanged: current.unchanged + result.counts.unchanged,
      rejected: current.rejected + result.counts.rejected,
    };
    // At least one chunk per invocation, however short the budget.
    if (current.nextRow < current.totalRows && Date.now() > options.deadline) {
      return { state: "continue", job: current, planned, invitations };
    }
  }
  const finished = await finishJob(env, current, parsed.rows, index);
  if (!finished) return { state: "lost", job: (await findJob(db, job.id)) ?? current, planned, invitations };
  return { state: "done", job: finished, planned, invitations };
}

/**
 * Who a sync run suspends: invited and active members named by no row of the file (the uploader
 * never), keeping at least one active admin.
 */
export function membersToSuspend(
  index: MemberIndex,
  rows: readonly CsvRow[],
  uploaderId: string,
): IndexedMember[] {
  const absent = index.absentActive(rows, uploaderId);
  const admins = absent.filter((m) => m.role === "institution_admin");
  if (admins.length > 0 && index.activeAdmins - admins.length < 1) {
    return absent.filter((m) => m.role !== "institution_admin");
  }
  return absent;
}

const FINISH_GUARD = `SELECT json(CASE WHEN EXISTS (SELECT 1 FROM bulk_jobs WHERE id = ?1 AND next_row = total_rows AND status = 'processing') THEN '1' ELSE 'guard failed' END)`;
const SUSPEND = `UPDATE users SET status = 'suspended', updated_at = ?3 WHERE institution_id = ?2 AND status IN ('invited', 'active') AND id IN (SELECT value FROM json_each(?1))`;
const REVOKE = `UPDATE api_tokens SET revoked_at = ?2 WHERE revoked_at IS NULL AND user_id IN (SELECT value FROM json_each(?1))`;
const COMPLETE = `UPDATE bulk_jobs SET status = 'completed', suspended = ?2, completed_at = ?3, heartbeat_at = ?4, r2_key = NULL WHERE id = ?1 AND status = 'processing'`;

/**
 * The last step, once every row is applied: a sync run suspends the absent members, and the job is
 * completed, in one batch guarded on the job being at its end. Null when somebody else finished it.
 */
async function finishJob(
  env: Env,
  job: BulkJob,
  rows: readonly CsvRow[],
  index: MemberIndex,
): Promise<BulkJob | null> {
  const d1 = env.DB;
  const now = nowIso();
  const suspend = job.mode === "sync" ? membersToSuspend(index, rows, job.uploadedBy) : [];
  const statements: D1PreparedStatement[] = [d1.prepare(FINISH_GUARD).bind(job.id)];
  const events = suspend.map((m) =>
    memberUpdated(job.institutionId, m.id, { status: { from: m.status, to: "suspended" } }, now),
  );
  if (!job.dryRun && suspend.length > 0) {
    const ids = jsonArrays(suspend.map((m) => m.id));
    const eventRows = events.map((e) => ({ id: e.id, type: e.type, user_id: e.userId, payload: e.payload }));
    for (const array of ids) statements.push(d1.prepare(SUSPEND).bind(array, job.institutionId, now));
    for (const array of ids) statements.push(d1.prepare(REVOKE).bind(array, now));
    for (const array of jsonArrays(eventRows))
      statements.push(d1.prepare(INSERT_EVENTS).bind(array, job.institutionId, now));
  }
  statements.push(d1.prepare(COMPLETE).bind(job.id, suspend.length, now, Date.now()));
  try {
    await d1.batch(statements);
  } catch (error) {
    if (isBatchGuardFailure(error)) return null;
    throw error;
  }
  if (job.r2Key) await env.EXPORTS_BUCKET.delete(job.r2Key).catch(() => undefined);
  if (!job.dryRun && suspend.length > 0) {
    const userIds = suspend.map((m) => m.id);
    await revokeGates(env, await tokensRevokedAt(database(env.DB), userIds, now));
    await publishEvents(
      env,
      events.map((e) => e.id),
    );
  }
  return { ...job, status: "completed", suspended: suspend.length, completedAt: now, r2Key: null };
}
