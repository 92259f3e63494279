import type { Child } from "hono/jsx";
import type { HealthCounts } from "../../domains/xapi/health";
import type { EndpointRow } from "../../domains/xapi/service";
import { ActionForm, Col, ConfirmForm, EmptyState, ListTable, Notice, StatusBadge } from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import { XAPI_PATH } from "../prefixes";
import type { DashboardSession } from "../session";
import { EndpointFields, type EndpointForm, endpointPath, PER_PAGE, type TestResult } from "./xapi-form";

/** The xAPI section's list, endpoint page and test result; routes/xapi.tsx holds the handlers. */

export function HealthLine({ row, counts }: { row: EndpointRow; counts: HealthCounts }) {
  return (
    <span>
      {`Last 24 h: ${counts.sent} sent, ${counts.failed} failed; ${counts.pending} pending. `}
      {row.failingSince ? (
        <>
          <StatusBadge text="Failing" warn /> since <When iso={row.failingSince} />
          {row.lastError ? <span class="hint"> {row.lastError}</span> : null}
        </>
      ) : row.lastSuccessAt ? (
        <>
          Last success <When iso={row.lastSuccessAt} />
        </>
      ) : null}
    </span>
  );
}

export function EndpointList({
  rows,
  health,
  total,
  page,
  notice,
}: {
  rows: EndpointRow[];
  health: Map<string, HealthCounts>;
  total: number;
  page: number;
  notice?: string;
}) {
  return (
    <>
      <h1>xAPI</h1>
      <Notice text={notice} />
      <p>
        Lingua sends your learners' activity as xAPI statements to your Learning Record Stores, as it happens.
      </p>
      <div class="actions">
        <a class="button" href={`${XAPI_PATH}/new`}>
          Add endpoint
        </a>
      </div>
      <ListTable
        label="xAPI endpoints"
        count={rows.length}
        total={total}
        path={XAPI_PATH}
        page={page}
        perPage={PER_PAGE}
        empty={
          <EmptyState title="No LRS connected yet">
            <p>Add your LRS's xAPI endpoint and credentials, then send it a test call.</p>
          </EmptyState>
        }
        head={
          <>
            <Col>Name</Col>
            <Col>Status</Col>
            <Col>Health</Col>
          </>
        }
        rows={rows.map((r) => (
          <tr>
            <th scope="row">
              <a href={endpointPath(r.id)}>{r.name}</a>
              <span class="hint"> {r.endpoint}</span>
            </th>
            <td>
              <StatusBadge text={r.enabled ? "Enabled" : "Disabled"} warn={!r.enabled} />
            </td>
            <td>
              <HealthLine row={r} counts={health.get(r.id) ?? { sent: 0, failed: 0, pending: 0 }} />
            </td>
          </tr>
        ))}
      />
    </>
  );
}

export function TestResultView({ row, result }: { row: EndpointRow; result: TestResult }) {
  const ok = result.reachable && result.credentials_accepted === true && result.version_supported !== false;
  const probe = (name: string, p: TestResult["about"]) =>
    `${name}: ${p.status ?? "no answer"}${p.duration_ms !== null ? ` in ${p.duration_ms} ms` : ""}${p.error ? ` (${p.error})` : ""}`;
  return (
    <>
      <h1>Test call</h1>
      <p class={ok ? "notice" : "error-summary"} role="status">
        {ok
          ? "The LRS answered and accepted the credentials."
          : !result.reachable
            ? "The LRS did not answer."
            : result.credentials_accepted === false
              ? "The LRS refused the credentials."
              : result.version_supported === false
                ? `The LRS does not support xAPI ${row.version}.`
                : "The LRS answered, but the credentials could not be checked."}
      </p>
      <div class="card">
        <p>
          <code>{row.endpoint}</code>
        </p>
        <ul>
          <li>{probe("GET about", result.about)}</li>
          <li>{probe("GET statements", result.statements)}</li>
          <li>{`Versions: ${result.versions ? result.versions.join(", ") : "not stated"}`}</li>
        </ul>
      </div>
      <div class="actions">
        <a class="button" href={endpointPath(row.id)}>
          Back to the endpoint
        </a>
      </div>
    </>
  );
}

export function EndpointDetail({
  session,
  row,
  counts,
  form,
  errors,
  notice,
  log,
  backfills,
}: {
  session: DashboardSession;
  row: EndpointRow;
  counts: HealthCounts;
  form: EndpointForm;
  errors: string[];
  notice?: string;
  log: Child;
  backfills: Child;
}) {
  const path = endpointPath(row.id);
  return (
    <>
      <h1>{row.name}</h1>
      <Notice text={notice} />
      <div class="card">
        <p>
          <code>{row.endpoint}</code>{" "}
          <StatusBadge text={row.enabled ? "Enabled" : "Disabled"} warn={!row.enabled} />
        </p>
        <p>
          <HealthLine row={row} counts={counts} />
        </p>
        <div class="actions">
          <ActionForm action={`${path}/test`} csrf={session.csrf} button="Send test call" />
        </div>
      </div>
      {log}
      {backfills}
      <section aria-labelledby="edit-h">
        <h2 id="edit-h">Settings</h2>
        <ErrorSummary errors={errors} />
        <form method="post" action={path}>
          <CsrfField token={session.csrf} />
          <EndpointFields form={form} editing />
          <div class="actions">
            <button type="submit">Save</button>
          </div>
        </form>
      </section>
      <ConfirmForm
        action={`${path}/delete`}
        csrf={session.csrf}
        summary="Delete this endpoint…"
        text="Delete the endpoint? Forwarding stops at once; its forwarding log and back-fills are deleted. This cannot be undone."
        button="Delete endpoint"
      />
    </>
  );
}
