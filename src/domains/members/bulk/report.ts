import type { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { bulkJobRows, bulkJobs } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import type { PrincipalContext } from "../../../platform/service/context";
import { csvLine } from "../../exports/csv";
import { invitationUrl } from "../invitations";
import { INSTITUTIONS } from "../prefixes";
import { reachableInstitution } from "../service";
import { type BulkJob, reportRows } from "./jobs";
import type { PlannedRow } from "./plan";
import { invitationsOnFirstRead } from "./report-invitations";
import type { BulkReportRowSchema, BulkReportSchema } from "./schemas";

type ReportRow = z.infer<typeof BulkReportRowSchema>;
type Report = z.infer<typeof BulkReportSchema>;

export function bulkJobPath(job: Pick<BulkJob, "institutionId" | "id">): string {
  return `${INSTITUTIONS}/${job.institutionId}/members/bulk/${job.id}`;
}

export function presentReport(
  job: BulkJob,
  origin: string,
  rows: ReportRow[],
  meta: Report["rows_meta"],
): Report {
  return {
    id: job.id,
    status: job.status,
    dry_run: job.dryRun,
    mode: job.mode,
    total_rows: job.totalRows,
    processed_rows: job.nextRow,
    counts: {
      created: job.created,
      updated: job.updated,
      unchanged: job.unchanged,
      suspended: job.suspended,
      rejected: job.rejected,
    },
    error: job.status === "failed" ? job.error : null,
    created_at: job.createdAt,
    completed_at: job.completedAt,
    rejected_csv_url: `${origin}${bulkJobPath(job)}/rejected.csv`,
    rows,
    rows_meta: meta,
  };
}

/** The rows of an upload answered within the request, each with its invitation URL if it created one. */
export function plannedReportRows(
  job: Pick<BulkJob, "dryRun">,
  planned: PlannedRow[],
  invitations: Map<number, string>,
  origin: string,
) {
  return planned.map(
    (p): ReportRow => ({
      line: p.row.line,
      email: p.row.email,
      external_id: p.row.externalId,
      outcome: p.outcome,
      errors: p.errors,
      // A dry run creates nobody: a member it would create has no id yet.
      member_id: job.dryRun && p.outcome === "created" ? null : (p.member?.id ?? null),
      invitation_url: invitations.has(p.row.line)
        ? invitationUrl(origin, invitations.get(p.row.line) ?? "")
        : null,
    }),
  );
}

/** The institution's bulk upload `jobId`: 404 unless the caller reaches the institution's members and it exists. */
export async function findJobInScope(ctx: PrincipalContext, input: { institutionId: string; jobId: string }) {
  const institution = await reachableInstitution(ctx, input.institutionId);
  const job = await ctx.db
    .select()
    .from(bulkJobs)
    .where(and(eq(bulkJobs.id, input.jobId), eq(bulkJobs.institutionId, institution.id)))
    .get();
  if (!job) throw new ApiError("not_found", `No bulk upload ${input.jobId}.`);
  return job;
}

/** A job and a page of its report; a queued upload's invitation URLs are minted when first read, shown once. */
export async function readReport(
  ctx: PrincipalContext,
  args: {
    institutionId: string;
    jobId: string;
    page: number;
    perPage: number;
    outcome?: string;
    requestUrl: string;
  },
) {
  const job = await findJobInScope(ctx, args);
  const { rows, total } = await reportRows(ctx, {
    jobId: job.id,
    outcome: args.outcome,
    limit: args.perPage,
    offset: (args.page - 1) * args.perPage,
  });
  const url = new URL(args.requestUrl);
  const invitations = await invitationsOnFirstRead(ctx, { job, rows, origin: url.origin });
  const wire = rows.map(
    (row): ReportRow => ({
      line: row.line,
      email: row.email,
      external_id: row.externalId,
      outcome: row.outcome,
      errors: row.errors,
      member_id: row.userId,
      invitation_url: invitations.get(row.line) ?? null,
    }),
  );
  const lastPage = Math.max(1, Math.ceil(total / args.perPage));
  url.searchParams.set("page", String(args.page + 1));
  const meta = {
    total,
    per_page: args.perPage,
    current_page: args.page,
    last_page: lastPage,
    next: args.page < lastPage ? url.toString() : null,
  };
  return presentReport(job, url.origin, wire, meta);
}

/** rejected.csv: the rejected rows as uploaded, in line order, with `line` and `reason` columns after them. */
export async function rejectedCsv(ctx: PrincipalContext, input: { institutionId: string; jobId: string }) {
  const job = await findJobInScope(ctx, input);
  if (job.status === "queued" || job.status === "processing") {
    throw new ApiError(
      "bulk_not_finished",
      "The upload is still being processed; download its rejected rows once it is `completed`.",
      {
        extensions: { bulk_status: job.status },
      },
    );
  }
  const rows = await ctx.db
    .select({ line: bulkJobRows.line, cells: bulkJobRows.cells, errors: bulkJobRows.errors })
    .from(bulkJobRows)
    .where(and(eq(bulkJobRows.jobId, job.id), eq(bulkJobRows.outcome, "rejected")))
    .orderBy(bulkJobRows.line)
    .all();
  const width = job.header.length;
  const lines = [csvLine([...job.header, "line", "reason"], width + 2)];
  for (const row of rows) {
    const cells = Array.from({ length: width }, (_, i) => row.cells?.[i] ?? "");
    lines.push(csvLine([...cells, row.line, row.errors.join("; ")], width + 2));
  }
  return { job, text: lines.join("") };
}
