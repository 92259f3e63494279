import type { z } from "zod";
import { BULK_OUTCOMES } from "../../db/schema";
import type { BulkJob } from "../../domains/members/bulk/jobs";
import type { BulkReportSchema } from "../../domains/members/bulk/schemas";
import {
  Col,
  CopyField,
  EmptyState,
  FilterBar,
  ListTable,
  Notice,
  ProgressBar,
  Select,
  StatusBadge,
} from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import { MEMBERS_BULK_PATH } from "../prefixes";
import type { DashboardSession } from "../session";
import { bulkPath } from "./bulk-upload";

/** A bulk upload's report (dry run or real) and its progress, as the page and its polling see it. */

export type BulkReport = z.infer<typeof BulkReportSchema>;
export const REPORT_PER_PAGE = 50;

const done = (status: string) => status === "completed" || status === "failed";

function progressText(status: string, error: string | null, processed: number, total: number): string {
  if (status === "failed") return `Failed: ${error ?? "unknown error"}`;
  const rows = `${processed.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} rows`;
  return status === "completed" ? `${rows} done` : `${rows} processed`;
}

/** What the progress line says of a job (also the JSON its page's script polls). */
export function bulkStatus(job: BulkJob) {
  const counts = {
    created: job.created,
    updated: job.updated,
    unchanged: job.unchanged,
    suspended: job.suspended,
    rejected: job.rejected,
  };
  const text = progressText(job.status, job.error, job.nextRow, job.totalRows);
  return {
    id: job.id,
    status: job.status,
    done: done(job.status),
    processed_rows: job.nextRow,
    total_rows: job.totalRows,
    counts,
    progress_text: text,
  };
}

function Counts({ report }: { report: BulkReport }) {
  const verb = report.dry_run ? "would be " : "";
  const items: [keyof BulkReport["counts"], string][] = [
    ["created", `${verb}created`],
    ["updated", `${verb}updated`],
    ["unchanged", "unchanged"],
    ["suspended", `${verb}suspended`],
    ["rejected", "rejected"],
  ];
  return (
    <ul class="counts" aria-label="Counts">
      {items.map(([key, label]) => (
        <li>
          <strong data-field={`count-${key}`}>{report.counts[key]}</strong>
          {label}
        </li>
      ))}
    </ul>
  );
}

/** The report's rows: line, e-mail, outcome and problems; invitation links of created members (once). */
function ReportRows({ rows }: { rows: BulkReport["rows"] }) {
  return (
    <>
      {rows.map((r) => (
        <tr>
          <td>{r.line}</td>
          <th scope="row">{r.email ?? "—"}</th>
          <td>{r.external_id ? <code>{r.external_id}</code> : "—"}</td>
          <td>
            <StatusBadge text={r.outcome} warn={r.outcome === "rejected"} />
          </td>
          <td>
            {r.errors.length > 0 ? (
              <ul class="problems">
                {r.errors.map((e) => (
                  <li>{e}</li>
                ))}
              </ul>
            ) : null}
            {r.invitation_url ? (
              <CopyField id={`invitation-${r.line}`} label="Invitation link" value={r.invitation_url} />
            ) : null}
          </td>
        </tr>
      ))}
    </>
  );
}

/**
 * A bulk upload: its status and progress (polled while it runs), the counts, a page of its rows,
 * the rejected rows' download, and — after a dry run, when the page still holds the file — the
 * form that applies the same file for real.
 */
export function BulkReportView({
  session,
  report,
  outcome,
  page,
  paged,
  csv,
  mode,
  force,
  errors = [],
  notice,
}: {
  session: DashboardSession;
  report: BulkReport;
  outcome?: string;
  page: number;
  /** Whether `rows` is a page of the report (the job's page) or all of it (the upload's answer). */
  paged: boolean;
  /** The dry run's file, when this page answers its upload: what "Apply" sends again. */
  csv?: string;
  mode?: string;
  force?: boolean;
  errors?: string[];
  notice?: string;
}) {
  const open = !done(report.status);
  const path = bulkPath(report.id);
  return (
    <>
      <h1>{report.dry_run ? "Dry run of a members upload" : "Members upload"}</h1>
      <Notice text={notice} />
      <ErrorSummary errors={errors} />
      <div class="card" data-poll={open ? `${path}/status` : undefined}>
        <p>
          <StatusBadge text={report.status} warn={report.status === "failed"} field="status" />{" "}
          {report.dry_run ? "Nothing was changed: this is what applying the file would do." : null}
          {report.mode === "sync" ? " Mode: sync (members missing from the file are suspended)." : null}
        </p>
        <ProgressBar
          label="Rows processed"
          done={report.processed_rows}
          total={report.total_rows}
          text={progressText(report.status, report.error, report.processed_rows, report.total_rows)}
        />
        <Counts report={report} />
        <p class="hint">
          Uploaded <When iso={report.created_at} />
          {report.completed_at ? (
            <>
              , finished <When iso={report.completed_at} />
            </>
          ) : null}
          .
        </p>
        <p data-show-when-done="" hidden={open}>
          <a href={`${path}/rejected.csv`} download>
            Download the rejected rows
          </a>{" "}
          (CSV with a reason per row: fix them and upload that file again)
          {paged ? null : (
            <>
              {" · "}
              <a href={path}>Open this upload's page</a>
            </>
          )}
        </p>
      </div>
      {csv !== undefined && report.dry_run && report.status !== "failed" ? (
        <section aria-labelledby="apply-h" class="card">
          <h2 id="apply-h">Apply the file</h2>
          <p>
            Apply the same file for real: the rows above marked created, updated or suspended change; rejected
            rows are skipped.
          </p>
          <form method="post" action={MEMBERS_BULK_PATH}>
            <CsrfField token={session.csrf} />
            <input type="hidden" name="dry_run" value="false" />
            <input type="hidden" name="mode" value={mode ?? report.mode} />
            {force ? <input type="hidden" name="force" value="true" /> : null}
            <input type="hidden" name="csv" value={csv} />
            <input type="hidden" name="checked" value={report.id} />
            <div class="actions">
              <button type="submit">Apply</button>
              <a class="button secondary" href={MEMBERS_BULK_PATH}>
                Upload another file
              </a>
            </div>
          </form>
        </section>
      ) : null}
      <section aria-labelledby="rows-h">
        <h2 id="rows-h">Rows</h2>
        {paged ? (
          <FilterBar path={path} label="Filter the rows" active={outcome !== undefined}>
            <Select
              id="outcome"
              label="Outcome"
              any="Every outcome"
              value={outcome ?? ""}
              options={BULK_OUTCOMES.map((o) => ({ value: o, label: o }))}
            />
          </FilterBar>
        ) : null}
        <ListTable
          label="Rows"
          caption={`Rows (${report.rows_meta.total})`}
          count={report.rows.length}
          total={report.rows_meta.total}
          path={path}
          query={outcome ? { outcome } : {}}
          page={page}
          perPage={paged ? REPORT_PER_PAGE : Math.max(1, report.rows.length)}
          empty={
            <EmptyState>
              <p>
                {open
                  ? "The rows appear here as the upload is processed."
                  : outcome
                    ? `No ${outcome} rows.`
                    : "The file has no data rows."}
              </p>
            </EmptyState>
          }
          head={
            <>
              <Col>Line</Col>
              <Col>E-mail</Col>
              <Col>External id</Col>
              <Col>Outcome</Col>
              <Col>Problems and invitation links</Col>
            </>
          }
          rows={<ReportRows rows={report.rows} />}
        />
      </section>
    </>
  );
}
