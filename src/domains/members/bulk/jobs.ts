import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { type BulkMode, bulkJobRows, bulkJobs } from "../../../db/schema";
import { pageWithTotal } from "../../../platform/http/pagination";
import { newId, nowIso } from "../../../platform/ids";
import {
  awaitingMessage,
  claimable,
  expired,
  heldBy,
  type LeasedJobs,
  taken,
} from "../../../platform/jobs/lease";
import { sendMessage } from "../../../platform/queue";
import type { ServiceContext } from "../../../platform/service/context";
import { checkRows, type ParsedCsv, type StoredRecord } from "./csv";

export type BulkJob = typeof bulkJobs.$inferSelect;
export type BulkReportRow = typeof bulkJobRows.$inferSelect;

/** Uploads of at most this many data rows are applied within the request and answered 200. */
export const IN_REQUEST_ROWS = 1_000;
/** `mode=sync` refuses to suspend more than this share of the institution's members, unless forced. */
export const SYNC_THRESHOLD = 0.1;

/** A bulk queue message: apply job `job_id` from its checkpoint, as generation `generation`. */
export const BulkMessageSchema = z.object({
  job_id: z.string().min(1),
  generation: z.number().int().min(0),
});
export type BulkMessage = z.infer<typeof BulkMessageSchema>;

/** The jobs' table as the lease mechanism sees it (platform/jobs/lease.ts). */
export const LEASE: LeasedJobs = {
  table: bulkJobs,
  id: bulkJobs.id,
  generation: bulkJobs.generation,
  leaseId: bulkJobs.leaseId,
  leaseUntil: bulkJobs.leaseUntil,
  active: () => isActive(),
};

/**
 * Where a queued upload waits in R2: its records as the request read them (JSON of line and cells),
 * so the consumer does not parse the CSV a second time; it checks the rows again, which is cheap.
 */
export function fileKey(job: Pick<BulkJob, "institutionId" | "id">): string {
  return `bulk/${job.institutionId}/${job.id}.json`;
}

export function storedFile(parsed: ParsedCsv): string {
  return JSON.stringify({ header: parsed.header, records: parsed.rows.map((r) => [r.line, r.cells]) });
}

/** The stored upload: its header and records as `storedFile` wrote them. */
export function readStoredFile(bytes: Uint8Array): ParsedCsv {
  const stored = JSON.parse(new TextDecoder().decode(bytes)) as { header: string[]; records: StoredRecord[] };
  return checkRows(stored.header, stored.records);
}

export function newJob(fields: {
  id: string;
  institutionId: string;
  uploadedBy: string;
  uploaderRole: string;
  mode: BulkMode;
  dryRun: boolean;
  force: boolean;
  queued: boolean;
  header: string[];
  totalRows: number;
  /** The upload's instant (ms): its creation and first sign of life. */
  now: number;
}): BulkJob {
  const { now } = fields;
  // A queued job awaits its first message; one applied within the request is held by the request.
  const lease = fields.queued ? awaitingMessage(now) : taken(newId("lse"), now);
  return {
    id: fields.id,
    institutionId: fields.institutionId,
    uploadedBy: fields.uploadedBy,
    uploaderRole: fields.uploaderRole,
    mode: fields.mode,
    dryRun: fields.dryRun,
    force: fields.force,
    status: fields.queued ? "queued" : "processing",
    header: fields.header,
    r2Key: fields.queued ? fileKey(fields) : null,
    totalRows: fields.totalRows,
    nextRow: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    suspended: 0,
    rejected: 0,
    error: null,
    generation: 0,
    ...lease,
    attempts: 0,
    heartbeatAt: now,
    createdAt: nowIso(now),
    completedAt: null,
  };
}

const ACTIVE = ["queued", "processing"] as const;

/** The job is still to be applied (queued or processing). */
export const isActive = () => inArray(bulkJobs.status, [...ACTIVE]);

export const ABANDONED =
  "The request applying this upload ended before it finished; upload the file again (rows already applied then show as unchanged).";

/**
 * Records the job unless another upload of the institution is still active: the partial unique index
 * on active jobs makes the insert itself the check. A job that was being applied within its request
 * and whose lease ran out (the request died) is failed first: it has no stored file to resume from.
 * A queued job whose lease ran out still counts: the minute sweep resumes it. False: another upload
 * is in progress.
 */
export async function openJob(ctx: ServiceContext, job: BulkJob): Promise<boolean> {
  const { db } = ctx;
  const now = ctx.now();
  const [, inserted] = await db.batch([
    db
      .update(bulkJobs)
      .set({ status: "failed", error: ABANDONED, completedAt: nowIso(now), leaseId: null, leaseUntil: null })
      .where(
        and(
          eq(bulkJobs.institutionId, job.institutionId),
          isActive(),
          isNull(bulkJobs.r2Key),
          expired(LEASE, now),
        ),
      ),
    db.insert(bulkJobs).values(job).onConflictDoNothing().returning({ id: bulkJobs.id }),
  ]);
  return inserted.length === 1;
}

/**
 * Takes the job for this invocation, if it is active, at the message's generation, and nobody
 * holds it: `processing`, the lease `leaseId`'s, one more attempt. Returns the job, or null.
 */
export async function claimJob(
  ctx: ServiceContext,
  input: { message: BulkMessage; leaseId: string },
): Promise<BulkJob | null> {
  const { message, leaseId } = input;
  const now = ctx.now();
  const [job] = await ctx.db
    .update(bulkJobs)
    .set({
      status: "processing",
      ...taken(leaseId, now),
      attempts: sql`${bulkJobs.attempts} + 1`,
      heartbeatAt: now,
    })
    .where(
      and(
        eq(bulkJobs.id, message.job_id),
        isActive(),
        eq(bulkJobs.generation, message.generation),
        claimable(LEASE, now),
      ),
    )
    .returning();
  return job ?? null;
}

/** Gives the job back after an error to the message's retry, due in `retryInMs`. */
export async function releaseLease(
  ctx: ServiceContext,
  input: { jobId: string; leaseId: string; retryInMs: number },
): Promise<void> {
  await ctx.db
    .update(bulkJobs)
    .set(awaitingMessage(ctx.now(), input.retryInMs))
    .where(and(eq(bulkJobs.id, input.jobId), heldBy(LEASE, input.leaseId)))
    .run();
}

export async function findJob(ctx: ServiceContext, jobId: string): Promise<BulkJob | null> {
  return (await ctx.db.select().from(bulkJobs).where(eq(bulkJobs.id, jobId)).get()) ?? null;
}

/**
 * Marks an active job failed (its file, if any, is deleted by the caller); with `unless`, only if the
 * job is still as the caller saw it (its generation, and nobody holding it). True if it changed.
 */
export async function markFailed(
  ctx: ServiceContext,
  input: { jobId: string; reason: string; unless?: { generation: number } },
): Promise<boolean> {
  const now = ctx.now();
  const { unless } = input;
  const result = await ctx.db
    .update(bulkJobs)
    .set({
      status: "failed",
      error: input.reason,
      completedAt: nowIso(now),
      heartbeatAt: now,
      leaseId: null,
      leaseUntil: null,
    })
    .where(
      and(
        eq(bulkJobs.id, input.jobId),
        isActive(),
        unless ? eq(bulkJobs.generation, unless.generation) : undefined,
        unless ? claimable(LEASE, now) : undefined,
      ),
    )
    .run();
  return result.meta.changes === 1;
}

/** A page of the job's report rows, in line order, optionally of one outcome. */
export async function reportRows(
  ctx: ServiceContext,
  options: { jobId: string; outcome?: string; limit: number; offset: number },
) {
  const { db } = ctx;
  const where = and(
    eq(bulkJobRows.jobId, options.jobId),
    options.outcome ? eq(bulkJobRows.outcome, options.outcome as BulkReportRow["outcome"]) : undefined,
  );
  return pageWithTotal(
    db,
    db
      .select()
      .from(bulkJobRows)
      .where(where)
      .orderBy(asc(bulkJobRows.line))
      .limit(options.limit)
      .offset(options.offset),
    bulkJobRows,
    where,
  );
}

export async function enqueueBulk(ctx: ServiceContext, message: BulkMessage): Promise<void> {
  await sendMessage(ctx, ctx.env.BULK_QUEUE, message);
}
