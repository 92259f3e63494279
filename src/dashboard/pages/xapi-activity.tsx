import { XAPI_ACTIVITIES, XAPI_STATEMENT_STATUSES } from "../../db/schema";
import type { Backfill } from "../../domains/xapi/backfill/jobs";
import type { EndpointRow } from "../../domains/xapi/service";
import { Col, EmptyState, FilterBar, ListTable, ProgressBar, Select, StatusBadge } from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import type { DashboardSession } from "../session";
import { endpointPath, LABELS, LOG_PER_PAGE, type LogRow } from "./xapi-form";

/** An xAPI endpoint's activity: the forwarding log and its back-fills. */

export function ForwardingLog({
  row,
  rows,
  total,
  page,
  status,
  verb,
}: {
  row: EndpointRow;
  rows: LogRow[];
  total: number;
  page: number;
  status?: string;
  verb?: string;
}) {
  const query: Record<string, string> = {};
  if (status) query.status = status;
  if (verb) query.verb = verb;
  const filtered = Object.keys(query).length > 0;
  return (
    <section aria-labelledby="log-h">
      <h2 id="log-h">Forwarding log</h2>
      <FilterBar path={endpointPath(row.id)} label="Filter the statements" active={filtered}>
        <Select
          id="status"
          label="Status"
          any="Every status"
          value={status ?? ""}
          options={XAPI_STATEMENT_STATUSES.map((s) => ({ value: s, label: s }))}
        />
        <Select
          id="verb"
          label="Verb"
          any="Every verb"
          value={verb ?? ""}
          options={XAPI_ACTIVITIES.map((v) => ({ value: v, label: v }))}
        />
      </FilterBar>
      <ListTable
        label="Statements"
        count={rows.length}
        total={total}
        path={endpointPath(row.id)}
        query={query}
        page={page}
        perPage={LOG_PER_PAGE}
        empty={
          <EmptyState>
            <p>
              {filtered
                ? "No statement matches these filters."
                : "No statements yet: they appear here as learners work (kept 90 days). To send past activity, request a back-fill."}
            </p>
          </EmptyState>
        }
        head={
          <>
            <Col>Verb</Col>
            <Col>Status</Col>
            <Col>Learner</Col>
            <Col>Occurred</Col>
            <Col>Attempts</Col>
            <Col>Last error</Col>
          </>
        }
        rows={rows.map((s) => (
          <tr>
            <td>
              <code>{s.verb}</code>
              <span class="hint"> {s.activityId}</span>
            </td>
            <td>
              <StatusBadge text={s.status} warn={s.status === "failed"} />
            </td>
            <td>
              <code>{s.userId}</code>
            </td>
            <td>
              <When iso={s.occurredAt} />
            </td>
            <td>{s.attempts}</td>
            <td>{s.lastError ?? "—"}</td>
          </tr>
        ))}
      />
    </section>
  );
}

/** What the poll of a back-fill answers, and what its row shows. */
export function backfillStatus(b: Backfill) {
  const done = b.status === "completed" || b.status === "failed";
  return {
    id: b.id,
    status: b.status,
    done,
    processed_rows: done ? 1 : 0,
    total_rows: 1,
    counts: { queued: b.statementsQueued },
    progress_text:
      b.status === "failed"
        ? `Failed: ${b.error ?? "unknown error"}`
        : `${b.statementsQueued.toLocaleString("en-US")} statements queued${done ? "" : " so far"}`,
  };
}

export function Backfills({
  session,
  row,
  backfills,
  errors,
}: {
  session: DashboardSession;
  row: EndpointRow;
  backfills: Backfill[];
  errors: string[];
}) {
  return (
    <section aria-labelledby="backfill-h" class="card">
      <h2 id="backfill-h">Back-fill</h2>
      <p>Send the activity of a past period (up to 90 days back) that this endpoint did not receive.</p>
      <ErrorSummary errors={errors} />
      <form method="post" action={`${endpointPath(row.id)}/backfills`}>
        <CsrfField token={session.csrf} />
        <label for="since">{LABELS.since}</label>
        <p class="hint" id="since-hint">
          From the start of this day (UTC) up to now.
        </p>
        <input id="since" name="since" type="date" required aria-describedby="since-hint" />
        <div class="actions">
          <button type="submit" class="secondary">
            Request back-fill
          </button>
        </div>
      </form>
      {backfills.length === 0 ? (
        <p class="hint">No back-fills yet.</p>
      ) : (
        <ul class="backfills">
          {backfills.map((b) => {
            const s = backfillStatus(b);
            return (
              <li
                data-poll={
                  s.done ? undefined : `${endpointPath(row.id)}/backfills/${encodeURIComponent(b.id)}/status`
                }
              >
                <StatusBadge text={b.status} warn={b.status === "failed"} field="status" /> Since{" "}
                <When iso={b.since} />, requested <When iso={b.createdAt} />
                <ProgressBar
                  label="Back-fill progress"
                  done={s.done ? 1 : 0}
                  total={1}
                  text={s.progress_text}
                />
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
