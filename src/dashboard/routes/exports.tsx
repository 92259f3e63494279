import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import type { ExportType } from "../../db/schema";
import { CSV_CONTENT_TYPE } from "../../domains/exports/generate";
import type { ExportJob } from "../../domains/exports/jobs";
import { REQUESTABLE_TYPES } from "../../domains/exports/policy";
import { CreateExportBody } from "../../domains/exports/schemas";
import { createExport, getExport, listExports, openDownload } from "../../domains/exports/service";
import { SOURCES } from "../../domains/exports/sources";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { dayProblem } from "../../platform/dates";
import { ApiError } from "../../platform/errors";
import { Col, EmptyState, ListTable, Notice, sectionPage } from "../components";
import { field, fieldMessages, formOf, issuesOf, pageNumber } from "../forms";
import { CsrfField, ErrorSummary, When } from "../layout";
import { EXPORTS_PATH } from "../prefixes";
import { checkCsrf, type DashboardSession, signedIn } from "../session";

const PER_PAGE = 25;
const SECTION = "exports";
const LABELS = { type: "Type", from: "From", to: "To", course_id: "Course id" };
const TYPE_LABELS: Record<ExportType, string> = {
  learner_progress: "Learner progress",
  completions: "Completions",
  activity: "Activity",
};
const NOTICES: Record<string, string> = {
  requested: "Your export is being generated; its progress updates on this page.",
};

interface ExportForm {
  type: string;
  from: string;
  to: string;
  courseId: string;
}

const exportPath = (id: string) => `${EXPORTS_PATH}/${encodeURIComponent(id)}`;
const open = (job: ExportJob) => job.status === "queued" || job.status === "processing";

/** What a row shows of a job: also the JSON the page's script polls while the job is open. */
function statusOf(job: ExportJob) {
  return {
    id: job.id,
    status: job.status,
    progress: job.progress,
    row_count: job.status === "completed" ? job.rowCount : null,
    error: job.status === "failed" ? job.error : null,
    download: job.status === "completed" ? `${exportPath(job.id)}/download` : null,
  };
}

function progressText(job: ExportJob): string {
  const s = statusOf(job);
  if (s.status === "completed") return `${(s.row_count ?? 0).toLocaleString("en-US")} rows`;
  if (s.status === "failed") return s.error ?? "failed";
  if (s.status === "expired") return "file deleted";
  return `${s.progress.toLocaleString("en-US")} rows so far`;
}

function RequestForm({
  session,
  form,
  errors,
}: {
  session: DashboardSession;
  form: ExportForm;
  errors: string[];
}) {
  const types = REQUESTABLE_TYPES[session.principal.user.role];
  return (
    <section aria-labelledby="request" class="card">
      <h2 id="request">Request an export</h2>
      <ErrorSummary errors={errors} />
      <form method="post" action={EXPORTS_PATH}>
        <CsrfField token={session.csrf} />
        <fieldset>
          <legend>{LABELS.type}</legend>
          {types.map((type) => (
            <label class="check">
              <input type="radio" name="type" value={type} checked={form.type === type} required />
              <span>
                {TYPE_LABELS[type]}
                <small>{SOURCES[type].summary}</small>
              </span>
            </label>
          ))}
        </fieldset>
        <label for="from">{LABELS.from}</label>
        <p class="hint" id="range-hint">
          Optional, in UTC: from the start of the first day to the start of the second.
        </p>
        <input id="from" name="from" type="date" value={form.from} aria-describedby="range-hint" />
        <label for="to">{LABELS.to}</label>
        <input id="to" name="to" type="date" value={form.to} aria-describedby="range-hint" />
        <label for="course_id">{LABELS.course_id}</label>
        <p class="hint" id="course-hint">
          Optional: only this course (its id, e.g. <code>crs_…</code>).
        </p>
        <input
          id="course_id"
          name="course_id"
          type="text"
          maxlength={200}
          value={form.courseId}
          aria-describedby="course-hint"
        />
        <div class="actions">
          <button type="submit">Request export</button>
        </div>
      </form>
    </section>
  );
}

function ExportRows({ jobs }: { jobs: ExportJob[] }) {
  return (
    <>
      {jobs.map((job) => {
        const s = statusOf(job);
        return (
          <tr data-export={open(job) ? `${exportPath(job.id)}/status` : undefined}>
            <th scope="row">{TYPE_LABELS[job.type]}</th>
            <td>
              <span class={job.status === "failed" ? "badge warn" : "badge"} data-field="status">
                {job.status}
              </span>
            </td>
            <td data-field="progress">{progressText(job)}</td>
            <td>
              <When iso={job.createdAt} />
            </td>
            <td>
              <When iso={job.expiresAt} />
            </td>
            <td data-field="download">{s.download ? <a href={s.download}>Download CSV</a> : null}</td>
          </tr>
        );
      })}
    </>
  );
}

function page(c: Context<AppEnv>, children: Child, status = 200) {
  return sectionPage(
    c,
    { title: "Exports", section: SECTION, crumbs: "Settings → Integrations", status },
    <>
      <h1>Exports</h1>
      {children}
    </>,
  );
}

async function renderList(c: Context<AppEnv>, form: ExportForm, errors: string[], status = 200) {
  const session = c.var.dashboard;
  enforce(holdsAbility(session.principal, "exports:read"));
  const pageNo = pageNumber(c.req.query("page"));
  const { total, rows } = await listExports(session.ctx, { page: { page: pageNo, per_page: PER_PAGE } });
  const notice = NOTICES[c.req.query("notice") ?? ""];
  const mayRequest = holdsAbility(session.principal, "exports:write").allowed;
  return page(
    c,
    <>
      <Notice text={notice} />
      <p>CSV files of your institution's learning data, kept for download for 7 days.</p>
      {mayRequest ? <RequestForm session={session} form={form} errors={errors} /> : null}
      <ListTable
        label="Exports"
        count={rows.length}
        total={total}
        path={EXPORTS_PATH}
        page={pageNo}
        perPage={PER_PAGE}
        empty={
          <EmptyState title="No exports yet">
            <p>Request one above: it is generated in the background and appears here with its progress.</p>
          </EmptyState>
        }
        head={
          <>
            <Col>Type</Col>
            <Col>Status</Col>
            <Col>Progress</Col>
            <Col>Requested</Col>
            <Col>Expires</Col>
            <Col hidden>Download</Col>
          </>
        }
        rows={<ExportRows jobs={rows} />}
      />
    </>,
    status,
  );
}

/** A `YYYY-MM-DD` of the form as the API's instant (its UTC midnight), or a message. */
function dayInstant(value: string, label: string): { value?: string } | { error: string } {
  if (!value) return {};
  const problem = dayProblem(value);
  return problem ? { error: `${label}: ${problem}` } : { value: `${value}T00:00:00Z` };
}

/**
 * Settings → Integrations → Exports: the exports domain's services behind the abilities of
 * `/api/integrations/exports` — request (type, range, course), watch the progress (the page's
 * script polls each open export's status), download the CSV.
 */
export function registerExports(app: Hono<AppEnv>) {
  app.get(EXPORTS_PATH, signedIn, (c) => renderList(c, { type: "", from: "", to: "", courseId: "" }, []));

  app.post(EXPORTS_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "exports:write"));
    const posted = await formOf(c);
    const form: ExportForm = {
      type: field(posted, "type"),
      from: field(posted, "from"),
      to: field(posted, "to"),
      courseId: field(posted, "course_id").trim(),
    };
    const from = dayInstant(form.from, LABELS.from);
    const to = dayInstant(form.to, LABELS.to);
    const dayErrors = [from, to].flatMap((d) => ("error" in d ? [d.error] : []));
    if (dayErrors.length > 0) return renderList(c, form, dayErrors, 422);
    const parsed = CreateExportBody.safeParse({
      type: form.type,
      ...("value" in from && from.value ? { from: from.value } : {}),
      ...("value" in to && to.value ? { to: to.value } : {}),
      ...(form.courseId ? { course_id: form.courseId } : {}),
    });
    if (!parsed.success)
      return renderList(c, form, fieldMessages(issuesOf(parsed.error.issues), LABELS), 422);
    try {
      await createExport(session.ctx, parsed.data);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      return renderList(
        c,
        form,
        error.errors ? fieldMessages(error.errors, LABELS) : [error.message],
        error.status,
      );
    }
    return c.redirect(`${EXPORTS_PATH}?notice=requested`, 303);
  });

  // What the page's script polls while an export is open: its status, progress and download link.
  app.get(`${EXPORTS_PATH}/:id/status`, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "exports:read"));
    const job = await getExport(session.ctx, c.req.param("id"));
    return c.json({ ...statusOf(job), progress_text: progressText(job) });
  });

  app.get(`${EXPORTS_PATH}/:id/download`, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "exports:read"));
    const opened = await openDownload(session.ctx, { id: c.req.param("id") });
    if ("notModified" in opened) return c.body(null, 304);
    return c.body(opened.object.body, 200, {
      "Content-Type": CSV_CONTENT_TYPE,
      "Content-Disposition": `attachment; filename="${opened.fileName}"`,
      "Content-Length": String(opened.object.size),
    });
  });
}
