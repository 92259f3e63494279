import { and, desc, eq, gt, isNull, lte, or, type SQL } from "drizzle-orm";
import {
  courses,
  type ExportFilters,
  type ExportStatus,
  type ExportType,
  exportJobs,
  users,
} from "../../db/schema";
import { enforce } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";
import { inJsonList } from "../../platform/db";
import { ApiError, type FieldError, validationError } from "../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { awaitingMessage } from "../../platform/jobs/lease";
import type { PrincipalContext } from "../../platform/service/context";
import { seesDrafts, visibleCourses } from "../content/service";
import { enqueueGeneration } from "./consumer";
import type { ExportJob } from "./jobs";
import { mayReadExport, mayRequestExport, mayUseExports, visibleExports } from "./policy";

/** ISO instants rounded up to the second, the precision of stored timestamps, so that string comparison is exact. */
function toStoredInstant(value: string): string {
  return nowIso(Math.ceil(Date.parse(value) / 1000) * 1000);
}

export interface CreateExportInput {
  type: ExportType;
  from?: string;
  to?: string;
  course_id?: string;
  user_ids?: string[];
}

/**
 * Validates the filters against what the caller may see (a course they can see — an unpublished one
 * answers like an unknown one — and members of their institution), records the job and sends its
 * first queue message. If the send fails the job stays `queued` and the minute sweep sends it (see
 * sweep.ts); the answer is 202 either way.
 */
export async function createExport(ctx: PrincipalContext, input: CreateExportInput): Promise<ExportJob> {
  const { principal } = ctx;
  enforce(mayRequestExport(principal, input.type));
  const { institutionId } = visibleExports(principal);
  const filters = await checkedFilters(ctx, { institutionId, input });
  // A deployment whose settings R2 would refuse takes no job it could only fail.
  void ctx.config.exports;
  const job = newJob(institutionId, principal.user.id, input.type, filters, ctx.now());
  await ctx.db.insert(exportJobs).values(job).run();
  try {
    await enqueueGeneration(ctx, { job_id: job.id, generation: 0 });
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "warn",
        message: "export enqueue failed; the sweep will send it",
        export_id: job.id,
        error: String(error),
      }),
    );
  }
  return job;
}

/** The job's filters, or 422 naming every course or user the caller may not export. */
async function checkedFilters(
  ctx: PrincipalContext,
  { institutionId, input }: { institutionId: string; input: CreateExportInput },
): Promise<ExportFilters> {
  const { db, principal } = ctx;
  const userIds = input.user_ids ? [...new Set(input.user_ids)] : undefined;
  const errors: FieldError[] = [];
  if (input.course_id || userIds) {
    const [course, members] = await db.batch([
      db
        .select({ id: courses.id })
        .from(courses)
        .where(and(eq(courses.id, input.course_id ?? ""), visibleCourses(seesDrafts(principal))))
        .limit(1),
      db
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.institutionId, institutionId), inJsonList(users.id, userIds ?? []))),
    ]);
    if (input.course_id && course.length === 0)
      errors.push({ path: "course_id", message: "is not a known course" });
    const known = new Set(members.map((m) => m.id));
    (input.user_ids ?? []).forEach((id, index) => {
      if (!known.has(id))
        errors.push({ path: `user_ids.${index}`, message: "is not a member of your institution" });
    });
  }
  if (errors.length > 0) throw validationError(errors);
  const filters: ExportFilters = {};
  if (input.from) filters.from = toStoredInstant(input.from);
  if (input.to) filters.to = toStoredInstant(input.to);
  if (input.course_id) filters.course_id = input.course_id;
  if (userIds) filters.user_ids = userIds;
  return filters;
}

function newJob(
  institutionId: string,
  requestedBy: string,
  type: ExportType,
  filters: ExportFilters,
  now: number,
): ExportJob {
  const id = newId("exp");
  return {
    id,
    institutionId,
    requestedBy,
    type,
    filters,
    status: "queued",
    rowCount: null,
    byteSize: null,
    progress: 0,
    error: null,
    r2Key: `exports/${institutionId}/${id}.csv`,
    uploadId: null,
    partSize: null,
    parts: [],
    cursor: null,
    generation: 0,
    // Its first message is sent with it: lost unless that message takes it within the grace.
    ...awaitingMessage(now),
    attempts: 0,
    heartbeatAt: now,
    createdAt: nowIso(now),
    startedAt: null,
    completedAt: null,
    expiresAt: null,
  };
}

/**
 * A completed export is `expired` from its `expires_at` on, as its download already is, although the
 * minute sweep deletes the file and writes the status only a little later.
 */
function asSeen(job: ExportJob, now: string): ExportJob {
  return job.status === "completed" && job.expiresAt !== null && job.expiresAt <= now
    ? { ...job, status: "expired" }
    : job;
}

/** The `status` filter, on the status as seen (asSeen), not as stored. */
function statusIs(status: ExportStatus, now: string): SQL | undefined {
  const pastRetention = and(eq(exportJobs.status, "completed"), lte(exportJobs.expiresAt, now));
  if (status === "expired") return or(eq(exportJobs.status, "expired"), pastRetention);
  if (status === "completed")
    return and(
      eq(exportJobs.status, "completed"),
      or(isNull(exportJobs.expiresAt), gt(exportJobs.expiresAt, now)),
    );
  return eq(exportJobs.status, status);
}

/** A page of the caller's institution's exports, newest first (ties by id). */
export async function listExports(
  ctx: PrincipalContext,
  input: { page: PageRequest; status?: ExportStatus; type?: ExportType },
) {
  const { principal, db } = ctx;
  const { page, status, type } = input;
  enforce(mayUseExports(principal));
  const now = nowIso(ctx.now());
  const where = and(
    eq(exportJobs.institutionId, visibleExports(principal).institutionId),
    status ? statusIs(status, now) : undefined,
    type ? eq(exportJobs.type, type) : undefined,
  );
  const { limit, offset } = pageBounds(page);
  const pageQuery = db
    .select()
    .from(exportJobs)
    .where(where)
    .orderBy(desc(exportJobs.createdAt), desc(exportJobs.id))
    .limit(limit)
    .offset(offset);
  const { rows, total } = await pageWithTotal(db, pageQuery, exportJobs, where);
  return { total, rows: rows.map((job) => asSeen(job, now)) };
}

/** The caller's institution's export, or 404. */
export async function getExport(ctx: PrincipalContext, id: string): Promise<ExportJob> {
  const job = (await ctx.db.select().from(exportJobs).where(eq(exportJobs.id, id)).get()) ?? null;
  enforce(mayReadExport(ctx.principal, id, job));
  // Allowed: the job exists.
  return asSeen(job as ExportJob, nowIso(ctx.now()));
}

/**
 * The file of a completed export, or the problem that says why there is none: 409 while it is
 * being generated or when it failed, 410 once its retention is over (from `expires_at` on). With
 * `isCurrent` (a conditional request), the object's metadata is looked at first and its body only
 * opened if needed.
 */
export async function openDownload(
  ctx: PrincipalContext,
  input: { id: string; isCurrent?: (object: R2Object) => boolean },
): Promise<
  | { job: ExportJob; fileName: string; object: R2ObjectBody }
  | { job: ExportJob; object: R2Object; notModified: true }
> {
  const { id, isCurrent } = input;
  const job = await getExport(ctx, id);
  switch (job.status) {
    case "queued":
    case "processing":
      throw new ApiError(
        "export_not_ready",
        `Export ${id} is ${job.status} (${job.progress.toLocaleString("en-US")} rows written so far); try again shortly.`,
        {
          headers: { "Retry-After": "5" },
          extensions: { export_status: job.status, progress: job.progress },
        },
      );
    case "failed":
      throw new ApiError("export_failed", `Export ${id} failed: ${job.error ?? "unknown reason"}`, {
        extensions: { export_status: job.status, progress: job.progress },
      });
    case "expired":
      throw expired(job);
  }
  if (isCurrent) {
    const head = await ctx.env.EXPORTS_BUCKET.head(job.r2Key);
    if (!head) throw expired(job);
    if (isCurrent(head)) return { job, object: head, notModified: true };
  }
  const object = await ctx.env.EXPORTS_BUCKET.get(job.r2Key);
  if (!object) throw expired(job);
  return { job, fileName: downloadFileName(job, ownSlug(ctx.principal)), object };
}

/** The slug of the caller's institution, which `getExport` has found to own the export. */
function ownSlug(principal: Principal): string {
  return principal.institution?.slug ?? "";
}

function expired(job: ExportJob): ApiError {
  return new ApiError(
    "export_expired",
    `Export ${job.id} expired${job.expiresAt ? ` at ${job.expiresAt}` : ""} and its file was deleted; request a new export.`,
  );
}

/**
 * `lingua-activity-acme-2026-11-21-8C9D0E1F.csv`: type, institution slug, the day it was requested
 * and the end of the export id. Type and day alone would name two exports of one day alike, and a
 * browser would then save the second as `… (1).csv`; the id's last 8 characters (its random part,
 * distinct even for ids minted in the same millisecond) tell them apart and find the export again.
 */
export function downloadFileName(job: ExportJob, institutionSlug: string): string {
  return `lingua-${job.type.replace(/_/g, "-")}-${institutionSlug}-${job.createdAt.slice(0, 10)}-${job.id.slice(-8)}.csv`;
}
