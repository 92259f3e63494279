import type { Role } from "../../../db/schema";
import { batchGuard, isBatchGuardFailure, jsonArrays } from "../../../platform/batch";
import { nowIso } from "../../../platform/ids";
import { commit, type Writable } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { enforcedSsoDomains } from "../../institutions/sso/enforced";
import { memberUpdated } from "../events";
import { ATTEMPTS, type ComparedField, membersUnchangedSince, sameMember } from "../member-change";
import { refreshPrincipals } from "../principal-refresh";
import { anotherActiveAdmin, findInstitution } from "../queries";
import { pushRevocations } from "../token-revocation";
import { applyChunk, type ChunkResult } from "./apply";
import type { CsvRow, ParsedCsv } from "./csv";
import { type BulkJob, findJob } from "./jobs";
import { emailsTakenElsewhere, type IndexedMember, MemberIndex, type PlannedRow, planRows } from "./plan";
import { COMPLETE, FINISH_GUARD, REVOKE_TOKENS, SUSPEND } from "./sql";

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

async function seatsOf(ctx: ServiceContext, institutionId: string): Promise<number | null> {
  return (await findInstitution(ctx.db, institutionId))?.seats ?? null;
}

/** After a chunk is committed (its events with it): gates re-read or drop what changed. */
async function afterChunk(ctx: ServiceContext, input: { result: ChunkResult; now: string }): Promise<void> {
  const { result } = input;
  if (result.suspended.length > 0) await pushRevocations(ctx, { userIds: result.suspended, at: input.now });
  for (const userId of result.principalChanged) await refreshPrincipals(ctx, { userId });
}

/**
 * The lines of the chunk's updated rows whose member is no longer as the plan read it (each member's
 * first row in the chunk: a later row of it builds on that one).
 */
function overtakenLines(planned: readonly PlannedRow[], reread: MemberIndex): number[] {
  const now = reread.membersById();
  const seen = new Set<string>();
  const lines: number[] = [];
  for (const p of planned) {
    if (!p.before || seen.has(p.before.id)) continue;
    seen.add(p.before.id);
    const fresh = now.get(p.before.id);
    if (!fresh || !sameMember(fresh, p.before)) lines.push(p.row.line);
  }
  return lines;
}

/**
 * Applies the job's rows from its checkpoint, chunk by chunk, until done or past the deadline, under
 * the job's lease (`job.leaseId`: every chunk is guarded on it and renews it). The
 * members are read once into memory; when a chunk's batch is refused (another writer changed a
 * member the chunk updates, took the seats, or the job moved on) the job is read again: moved on
 * means this invocation stops, otherwise the members are read again and the chunk planned afresh.
 * A row whose member was changed under it ATTEMPTS times is rejected (`OVERTAKEN_ERROR`, the other
 * rows go on); a refusal with no member changed (the seats, or the last active admin) is planned
 * afresh once. Past the deadline, a refused chunk hands over as an applied one does (once this
 * invocation applied one: at least one chunk per invocation).
 */
export async function runJob(
  ctx: ServiceContext,
  input: { job: BulkJob; parsed: ParsedCsv; options: RunOptions },
): Promise<RunOutcome> {
  const { job, parsed, options } = input;
  const { leaseId } = job;
  if (leaseId === null) throw new Error(`bulk job ${job.id} run without its lease`);
  const context = {
    uploaderRole: job.uploaderRole as Role,
    seats: await seatsOf(ctx, job.institutionId),
    ssoEnforcedDomains: await enforcedSsoDomains(ctx.db, job.institutionId),
  };
  let index = await MemberIndex.load(ctx, job.institutionId);
  const planned: PlannedRow[] = [];
  const invitations = new Map<number, string>();
  let current = job;
  let retried = false;
  /** Whether this invocation applied a chunk: past the deadline, it may then hand over. */
  let progressed = false;
  /** The chunk's lines whose member other writers changed under them, and how many times. */
  const losses = new Map<number, number>();
  while (current.nextRow < current.totalRows) {
    const toRow = Math.min(current.totalRows, current.nextRow + options.chunkRows);
    const rows = parsed.rows.slice(current.nextRow, toRow);
    const taken = await emailsTakenElsewhere(ctx, { index, emails: rows.map((r) => r.email) });
    const givenUp = new Set([...losses].filter(([, n]) => n >= ATTEMPTS).map(([line]) => line));
    const chunk = planRows(rows, index, context, taken, givenUp);
    const nowMs = ctx.now();
    const now = nowIso(nowMs);
    let result: ChunkResult;
    try {
      result = await applyChunk(ctx, {
        target: {
          jobId: job.id,
          leaseId,
          institutionId: job.institutionId,
          fromRow: current.nextRow,
          toRow,
          dryRun: job.dryRun,
          invitations: options.invitations,
          now,
          nowMs,
        },
        planned: chunk,
      });
    } catch (error) {
      const fresh = await findJob(ctx, job.id);
      if (fresh?.status !== "processing" || fresh.nextRow !== current.nextRow || fresh.leaseId !== leaseId) {
        return { state: "lost", job: fresh ?? current, planned, invitations };
      }
      if (!isBatchGuardFailure(error)) throw error;
      // Past the deadline, as after an applied chunk: the next invocation reads the members afresh.
      if (progressed && ctx.now() > options.deadline) {
        return { state: "continue", job: current, planned, invitations };
      }
      // Members changed under the plan: read them again and plan the chunk afresh.
      const reread = await MemberIndex.load(ctx, job.institutionId);
      const overtaken = overtakenLines(chunk, reread);
      for (const line of overtaken) losses.set(line, (losses.get(line) ?? 0) + 1);
      // None of its members changed: the seat or admin guard (others took seats or demoted admins),
      // planned afresh once on the counts as they are now.
      if (overtaken.length === 0) {
        if (retried) throw error;
        retried = true;
      }
      index = reread;
      context.seats = await seatsOf(ctx, job.institutionId);
      continue;
    }
    retried = false;
    progressed = true;
    losses.clear();
    await afterChunk(ctx, { result, now });
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
    if (current.nextRow < current.totalRows && ctx.now() > options.deadline) {
      return { state: "continue", job: current, planned, invitations };
    }
  }
  const finished = await finishJob(ctx, { job: current, leaseId, rows: parsed.rows, index });
  if (!finished) return { state: "lost", job: (await findJob(ctx, job.id)) ?? current, planned, invitations };
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

/**
 * What a sync's suspension of an absent member depends on: its status (what it writes and reports),
 * and its e-mail and external_id (by which it is absent from the file); the admin guard covers its role.
 */
const ABSENCE: readonly ComparedField[] = ["status", "email", "externalId"];

/** The members of `suspend` no longer as the index read them (see ABSENCE), or no longer members. */
function overtakenMembers(suspend: readonly IndexedMember[], reread: MemberIndex): IndexedMember[] {
  const now = reread.membersById();
  return suspend.filter((m) => {
    const fresh = now.get(m.id);
    return !fresh || !sameMember(fresh, m, ABSENCE);
  });
}

/**
 * The last step, once every row is applied: a sync run suspends the absent members, and the job is
 * completed, in one batch guarded on the job being at its end and on those members being as read
 * (member-change.ts) and, when it suspends an active admin, on an active admin remaining. When one of
 * them was changed meanwhile (or the other admins were), the members are read again and the
 * absent ones worked out afresh; a member changed under it ATTEMPTS times is left as the other
 * writer made it (not suspended, not counted). Null when somebody else finished the job.
 */
async function finishJob(
  ctx: ServiceContext,
  input: { job: BulkJob; leaseId: string; rows: readonly CsvRow[]; index: MemberIndex },
): Promise<BulkJob | null> {
  const { job } = input;
  const d1 = ctx.d1;
  let index = input.index;
  const losses = new Map<string, number>();
  let retried = false;
  for (;;) {
    const nowMs = ctx.now();
    const now = nowIso(nowMs);
    const suspend =
      job.mode === "sync"
        ? membersToSuspend(index, input.rows, job.uploadedBy).filter(
            (m) => (losses.get(m.id) ?? 0) < ATTEMPTS,
          )
        : [];
    const suspends = !job.dryRun && suspend.length > 0;
    const statements: Writable[] = [d1.prepare(FINISH_GUARD).bind(job.id, input.leaseId)];
    if (suspends) {
      statements.push(...membersUnchangedSince(ctx.db, job.institutionId, suspend, ABSENCE));
      const ids = jsonArrays(suspend.map((m) => m.id));
      for (const array of ids) statements.push(d1.prepare(SUSPEND).bind(array, job.institutionId, now));
      for (const array of ids) statements.push(d1.prepare(REVOKE_TOKENS).bind(array, now));
      // After the suspensions: whoever else demoted an admin since the index counted them.
      if (suspend.some((m) => m.role === "institution_admin" && m.status === "active"))
        statements.push(batchGuard(ctx.db, anotherActiveAdmin(job.institutionId, null)));
    }
    statements.push(d1.prepare(COMPLETE).bind(job.id, suspend.length, now, nowMs));
    const events = suspends
      ? suspend.map((m) =>
          memberUpdated(job.institutionId, m.id, { status: { from: m.status, to: "suspended" } }, now),
        )
      : [];
    try {
      await commit(ctx, { statements, events });
    } catch (error) {
      if (!isBatchGuardFailure(error)) throw error;
      const fresh = await findJob(ctx, job.id);
      if (!suspends || fresh?.status !== "processing" || fresh.leaseId !== input.leaseId) return null;
      const reread = await MemberIndex.load(ctx, job.institutionId);
      const overtaken = overtakenMembers(suspend, reread);
      // No member changed: the admin guard (another writer demoted the other admins), worked out
      // afresh once on the admins as they are now.
      if (overtaken.length === 0) {
        if (retried) throw error;
        retried = true;
      }
      for (const m of overtaken) losses.set(m.id, (losses.get(m.id) ?? 0) + 1);
      index = reread;
      continue;
    }
    if (job.r2Key) await ctx.env.EXPORTS_BUCKET.delete(job.r2Key).catch(() => undefined);
    if (suspends) await pushRevocations(ctx, { userIds: suspend.map((m) => m.id), at: now });
    return {
      ...job,
      status: "completed",
      suspended: suspend.length,
      completedAt: now,
      r2Key: null,
      leaseId: null,
      leaseUntil: null,
    };
  }
}
