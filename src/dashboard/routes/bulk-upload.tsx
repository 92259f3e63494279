import type { Context, Hono } from "hono";
import { BULK_OUTCOMES } from "../../db/schema";
import { CSV_CONTENT_TYPE } from "../../domains/exports/generate";
import {
  findJobInScope,
  plannedReportRows,
  presentReport,
  readReport,
  rejectedCsv,
} from "../../domains/members/bulk/report";
import { BulkUploadQuery } from "../../domains/members/bulk/schemas";
import { uploadMembers } from "../../domains/members/bulk/upload";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { ApiError } from "../../platform/errors";
import { institutionOf } from "../components";
import { fieldMessages, issuesOf, pageNumber } from "../forms";
import { BulkReportView, bulkStatus, REPORT_PER_PAGE } from "../pages/bulk-report";
import { bulkPath, LABELS, type UploadForm, UploadMembersForm } from "../pages/bulk-upload";
import { MEMBERS_BULK_PATH } from "../prefixes";
import { checkCsrf, signedIn } from "../session";
import { page } from "./members";

/** A bulk upload's file may be up to 5 MiB, as the API's (index.tsx lets this path's posts be that large). */
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;

const jobParam = (c: Context<AppEnv>) => c.req.param("job") ?? "";

function uploadForm(c: Context<AppEnv>, form: UploadForm, errors: string[], status = 200) {
  return page(
    c,
    "Upload members",
    <UploadMembersForm session={c.var.dashboard} form={form} errors={errors} />,
    status,
  );
}

/** The posted file: a `file` part (the upload form) or the `csv` text the dry run's page sends back. */
async function postedFile(
  c: Context<AppEnv>,
): Promise<{ fields: Record<string, string>; bytes: Uint8Array | null }> {
  const body = await c.req.parseBody();
  const fields: Record<string, string> = {};
  let bytes: Uint8Array | null = null;
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === "string") fields[name] = value;
    else if (name === "file" && value.size > 0) bytes = new Uint8Array(await value.arrayBuffer());
  }
  if (!bytes && fields.csv) bytes = new TextEncoder().encode(fields.csv);
  return { fields, bytes };
}

/**
 * Members → Upload: the bulk upload of `POST /api/institutions/{id}/members/bulk` in two steps. The
 * file is first sent as a dry run (nothing changes; the report shows the counts and every row's
 * problems); the report's page holds the same file and applies it for real with "Apply". Small files
 * answer at once; larger ones are queued, and their page polls the job's progress.
 */
export function registerBulkUpload(app: Hono<AppEnv>) {
  app.get(MEMBERS_BULK_PATH, signedIn, (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "members:write"));
    institutionOf(c.var.dashboard);
    return uploadForm(c, { mode: "upsert", force: false }, []);
  });

  app.post(MEMBERS_BULK_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:write"));
    const institution = institutionOf(session);
    const { fields, bytes } = await postedFile(c);
    const form: UploadForm = { mode: fields.mode ?? "upsert", force: fields.force === "true" };
    // The API's own query schema for the options.
    const options = BulkUploadQuery.safeParse({
      dry_run: fields.dry_run === "false" ? "false" : "true",
      mode: form.mode,
      force: form.force ? "true" : "false",
    });
    if (!options.success)
      return uploadForm(c, form, fieldMessages(issuesOf(options.error.issues), LABELS), 422);
    if (!bytes) return uploadForm(c, form, [`${LABELS.file}: choose a file`], 422);
    const origin = new URL(c.req.url).origin;
    let result: Awaited<ReturnType<typeof uploadMembers>>;
    try {
      result = await uploadMembers(session.ctx, {
        institutionId: institution.id,
        bytes,
        dryRun: options.data.dry_run,
        mode: options.data.mode,
        force: options.data.force,
      });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      const messages = error.errors ? fieldMessages(error.errors, LABELS) : [error.message];
      return uploadForm(c, form, messages, error.status);
    }
    const { job } = result;
    // A dry run's page keeps the file, so that "Apply" sends exactly what was checked.
    const csv = job.dryRun ? new TextDecoder().decode(bytes) : undefined;
    if (result.kind === "queued") {
      if (!job.dryRun) return c.redirect(bulkPath(job.id), 303);
      const meta = { total: 0, per_page: REPORT_PER_PAGE, current_page: 1, last_page: 1, next: null };
      const report = presentReport(job, origin, [], meta);
      return page(
        c,
        "Dry run",
        <BulkReportView
          session={session}
          report={report}
          page={1}
          paged={false}
          csv={csv}
          force={form.force}
        />,
        202,
      );
    }
    const rows = plannedReportRows(job, result.planned, result.invitations, origin);
    const meta = { total: rows.length, per_page: rows.length, current_page: 1, last_page: 1, next: null };
    const report = presentReport(job, origin, rows, meta);
    return page(
      c,
      job.dryRun ? "Dry run" : "Members uploaded",
      <BulkReportView
        session={session}
        report={report}
        page={1}
        paged={false}
        csv={csv}
        force={form.force}
        notice={
          job.dryRun
            ? undefined
            : "The file was applied. Copy the invitation links of the new members now: they are shown only this once."
        }
      />,
      job.dryRun ? 200 : 201,
    );
  });

  app.get(`${MEMBERS_BULK_PATH}/:job`, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:read"));
    const pageNo = pageNumber(c.req.query("page"));
    const outcome = BULK_OUTCOMES.find((o) => o === c.req.query("outcome"));
    // A queued upload's invitation links are issued the first time their rows are read, as in the API.
    const report = await readReport(session.ctx, {
      institutionId: institutionOf(session).id,
      jobId: jobParam(c),
      page: pageNo,
      perPage: REPORT_PER_PAGE,
      outcome,
      requestUrl: c.req.url,
    });
    return page(
      c,
      "Members upload",
      <BulkReportView session={session} report={report} outcome={outcome} page={pageNo} paged />,
    );
  });

  // What the page's script polls while the upload runs: status, progress and counts.
  app.get(`${MEMBERS_BULK_PATH}/:job/status`, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:read"));
    const job = await findJobInScope(session.ctx, {
      institutionId: institutionOf(session).id,
      jobId: jobParam(c),
    });
    return c.json(bulkStatus(job));
  });

  app.get(`${MEMBERS_BULK_PATH}/:job/rejected.csv`, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:read"));
    const { text } = await rejectedCsv(session.ctx, {
      institutionId: institutionOf(session).id,
      jobId: jobParam(c),
    });
    return c.body(text, 200, {
      "Content-Type": CSV_CONTENT_TYPE,
      "Content-Disposition": `attachment; filename="bulk-${jobParam(c)}-rejected.csv"`,
    });
  });
}
