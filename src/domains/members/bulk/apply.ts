import { batchGuard, jsonArrays } from "../../../platform/batch";
import { DECOY_PASSWORD_HASH } from "../../../platform/crypto/passwords";
import type { OutboxRow } from "../../../platform/events";
import { renewed } from "../../../platform/jobs/lease";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { emailClaims } from "../../../platform/service/directory";
import { memberCreated, memberUpdated } from "../events";
import { mintInvitation } from "../invitations";
import { memberFieldsJson, membersUnchangedSince } from "../member-change";
import { changesPrincipal } from "../principal-refresh";
import { anotherActiveAdmin } from "../queries";
import { takesAdminAway } from "../rules";
import type { IndexedMember, PlannedRow } from "./plan";
import {
  ADVANCE,
  CHECKPOINT_GUARD,
  DELETE_GROUPS,
  INSERT_GROUPS,
  INSERT_INVITATIONS,
  INSERT_REPORT,
  INSERT_USERS,
  REVOKE_TOKENS,
  SEAT_GUARD,
  UPDATE_USERS,
} from "./sql";

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
  /** Users whose cached principals must be re-read (what a principal carries changed) or whose tokens were revoked (suspended). */
  principalChanged: string[];
  suspended: string[];
  /** Invitation tokens of created members, by line, to show in the answer. */
  invitations: Map<number, string>;
}

export interface ChunkTarget {
  jobId: string;
  /** The lease the job must still be held by; the chunk renews it. */
  leaseId: string;
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
  /** The same instant in milliseconds: the job's heartbeat, and when minted invitations expire from. */
  nowMs: number;
}

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
  /** A row demotes or suspends an active admin: the batch must leave one (the plan's count may be stale). */
  takesAdmins: boolean;
}

async function collectChunk(target: ChunkTarget, planned: readonly PlannedRow[]): Promise<ChunkPayload> {
  const { institutionId, now } = target;
  const payload: ChunkPayload = {
    result: {
      counts: countOutcomes(planned),
      eventIds: [],
      principalChanged: [],
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
    takesAdmins: false,
  };
  const { result } = payload;
  const minting: Promise<void>[] = [];
  for (const p of planned) {
    const m = p.member;
    let due = false;
    if (m && p.outcome === "created") {
      payload.created.push(memberFieldsJson(m));
      for (const g of m.groups) payload.groupPairs.push([m.id, g]);
      payload.events.push(memberCreated(institutionId, m, now));
      if (m.status === "invited") payload.takesSeats = true;
      if (m.status === "invited" && !target.dryRun) {
        if (target.invitations === "defer") due = true;
        else minting.push(mintFor(payload, institutionId, m.id, p.row.line, target.nowMs));
      }
    } else if (m && p.outcome === "updated" && p.changes) {
      payload.updated.push(memberFieldsJson(m));
      if (p.changes.groups) {
        payload.regrouped.push(m.id);
        for (const g of m.groups) payload.groupPairs.push([m.id, g]);
      }
      if (changesPrincipal(p.changes) && p.changes.status?.to !== "suspended")
        result.principalChanged.push(m.id);
      if (p.changes.status?.to === "suspended") result.suspended.push(m.id);
      if (p.changes.status?.from === "suspended") payload.takesSeats = true;
      if (p.before && takesAdminAway(p.before, m.role, m.status)) payload.takesAdmins = true;
      payload.events.push(memberUpdated(institutionId, m.id, p.changes, now));
    }
    payload.report.push({
      line: p.row.line,
      email: p.row.email,
      external_id: p.row.externalId,
      outcome: p.outcome,
      errors: p.errors,
      // A dry run creates nobody: the planner's id for a member it would create exists nowhere.
      user_id: target.dryRun && p.outcome === "created" ? null : (m?.id ?? null),
      due: due ? 1 : 0,
      cells: p.outcome === "rejected" ? p.row.cells : null,
    });
  }
  // Hashing is asynchronous in WebCrypto: the chunk's tokens are minted side by side.
  await Promise.all(minting);
  return payload;
}

async function mintFor(
  payload: ChunkPayload,
  institutionId: string,
  userId: string,
  line: number,
  now: number,
): Promise<void> {
  const invitation = await mintInvitation(now, institutionId);
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
  if (payload.takesSeats) statements.push(d1.prepare(SEAT_GUARD).bind(institutionId));
  return statements;
}

/** The members the chunk updates, each as it was read before the chunk's first row changed it. */
function updatedAsRead(planned: readonly PlannedRow[]): IndexedMember[] {
  const read = new Map<string, IndexedMember>();
  for (const p of planned) if (p.before && !read.has(p.before.id)) read.set(p.before.id, p.before);
  return [...read.values()];
}

/**
 * Writes one planned chunk in one D1 batch (`commit`): members, groups, invitations, revoked tokens,
 * the report rows, the checkpoint and the members' events. The first statement fails the batch when
 * the job is no longer at `fromRow`, so a chunk delivered twice (or raced) is applied once; the next
 * ones when a member the chunk updates is no longer as it was read (member-change.ts), so that each
 * `member.updated` says what the member was (the runner reads the members again and plans the chunk
 * afresh); and, when the chunk demotes or suspends an active admin, the last one fails it unless an
 * active admin remains after its writes (another writer may have demoted the others since the plan
 * counted them; planned afresh, the row is rejected as `last_admin`). A dry run writes only the
 * report and the checkpoint.
 */
export async function applyChunk(
  ctx: ServiceContext,
  input: { target: ChunkTarget; planned: readonly PlannedRow[] },
): Promise<ChunkResult> {
  const { target } = input;
  const d1 = ctx.d1;
  const payload = await collectChunk(target, input.planned);
  const c = payload.result.counts;
  const { eventIds } = await commit(ctx, {
    // Every address the chunk writes (new members', changed ones') is the institution's everywhere.
    claims: target.dryRun
      ? []
      : emailClaims(
          target.institutionId,
          [...payload.created, ...payload.updated].map((m) => (m as { email: string }).email),
        ),
    statements: [
      d1.prepare(CHECKPOINT_GUARD).bind(target.jobId, target.fromRow, target.leaseId),
      ...(target.dryRun
        ? []
        : [
            ...membersUnchangedSince(ctx.db, target.institutionId, updatedAsRead(input.planned)),
            ...memberStatements(d1, target, payload),
            // After the writes: whoever else demoted an admin since the plan counted them.
            ...(payload.takesAdmins
              ? [batchGuard(ctx.db, anotherActiveAdmin(target.institutionId, null))]
              : []),
          ]),
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
          target.nowMs,
          renewed(target.nowMs).leaseUntil,
        ),
    ],
    events: target.dryRun ? [] : payload.events,
  });
  payload.result.eventIds = eventIds;
  return payload.result;
}
