import { and, asc, eq, inArray, lt } from "drizzle-orm";
import { type BulkMode, bulkJobRows, bulkJobs } from "../../../db/schema";
import { pageWithTotal } from "../../../platform/http/pagination";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { checkRows, type ParsedCsv, parseMemberCsv, type StoredRecord } from "./csv";

export type BulkJob = typeof bulkJobs.$inferSelect;
export type BulkReportRow = typeof bulkJobRows.$inferSelect;

/** Uploads of at most this many data rows are applied within the request and answered 200. */
export const IN_REQUEST_ROWS = 1_000;
/** A job nobody has moved for this long (a crashed request or consumer) no longer blocks new uploads. */
export const STALE_MS = 15 * 60_000;
/** `mode=sync` refuses to suspend more than this share of the institution's members, unless forced. */
export const SYNC_THRESHOLD = 0.1;

export interface BulkMessage {
  job_id: string;
  next_row: number;
}

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

/** The stored upload; a `.csv` key is a raw file stored before uploads were stored as records. */
export function readStoredFile(key: string, bytes: Uint8Array): ParsedCsv {
  if (key.endsWith(".csv")) return parseMemberCsv(bytes);
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
    leaseId: null,
    leaseUntil: null,
    attempts: 0,
    heartbeatAt: now,
    createdAt: nowIso(now),
    completedAt: null,
  };
}

const ACTIVE = ["queued", "processing"] as const;

/**
 * Records the job unless another upload of the institution is still active: the partial unique index
 * on active jobs makes the insert itself the check. A job left behind by a crash stops counting as
 * active after STALE_MS. False: another upload is in progress.
 */
export async function openJob(ctx: ServiceContext, job: BulkJob): Promise<boolean> {
  const { db } = ctx;
  const now = ctx.now();
  const [, inserted] = await db.batch([
    db
      .update(bulkJobs)
      .set({ status: "failed", error: "Abandoned: no progress for 15 minutes.", completedAt: nowIso(now) })
      .where(
        and(
          eq(bulkJobs.institutionId, job.institutionId),
          inArray(bulkJobs.status, [...ACTIVE]),
          lt(bulkJobs.heartbeatAt, now - STALE_MS),
        ),
      ),
    db.insert(bulkJobs).values(job).onConflictDoNothing().returning({ id: bulkJobs.id }),
  ]);
  return inserted.length === 1;
}

export async function findJob(ctx: ServiceContext, jobId: string): Promise<BulkJob | null> {
  return (await ctx.db.select().from(bulkJobs).where(eq(bulkJobs.id, jobId)).get()) ?? null;
}

/** Marks an active job failed (its file, if any, is deleted by the caller). */
export async function markFailed(
  ctx: ServiceContext,
  input: { jobId: string; reason: string },
): Promise<void> {
  const now = ctx.now();
  await ctx.db
    .update(bulkJobs)
    .set({ status: "failed", error: input.reason, completedAt: nowIso(now), heartbeatAt: now })
    .where(and(eq(bulkJobs.id, input.jobId), inArray(bulkJobs.status, [...ACTIVE])))
    .run();
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
  await ctx.env.BULK_QUEUE.send(message, { contentType: "json" });
}
