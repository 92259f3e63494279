import type { Child } from "hono/jsx";
import { XAPI_ACTIVITIES, XAPI_ACTOR_FORMATS, XAPI_STATEMENT_STATUSES, XAPI_VERSIONS } from "../../db/schema";
import type { Backfill } from "../../domains/xapi/backfill/jobs";
import type { listStatements } from "../../domains/xapi/forwarding-log";
import type { HealthCounts } from "../../domains/xapi/health";
import type { EndpointRow } from "../../domains/xapi/service";
import type { testEndpoint } from "../../domains/xapi/test-call";
import {
  ActionForm,
  Col,
  ConfirmForm,
  EmptyState,
  FilterBar,
  ListTable,
  Notice,
  ProgressBar,
  Select,
  StatusBadge,
} from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import { XAPI_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/** The xAPI section's views and form reading; routes/xapi.tsx holds the handlers. */

export type LogRow = Awaited<ReturnType<typeof listStatements>>["rows"][number];
export type TestResult = Awaited<ReturnType<typeof testEndpoint>>;

export const PER_PAGE = 25;
export const LOG_PER_PAGE = 25;
export const endpointPath = (id: string) => `${XAPI_PATH}/${encodeURIComponent(id)}`;
export const LABELS = {
  name: "Name",
  endpoint: "LRS endpoint",
  version: "xAPI version",
  auth: "Credentials",
  "auth.username": "Username",
  "auth.password": "Password",
  "auth.token_url": "Token URL",
  "auth.client_id": "Client id",
  "auth.client_secret": "Client secret",
  "auth.scope": "Scope",
  activities: "Activities",
  actor_format: "Actor",
  enabled: "Enabled",
  since: "Since",
};
export const NOTICES: Record<string, string> = {
  created:
    "The endpoint was added: statements are forwarded to it from now on. Send a test call to check it.",
  saved: "The endpoint was saved.",
  deleted: "The endpoint, its forwarding log and back-fills were deleted.",
  backfill: "The back-fill is queued; its progress updates on this page.",
};
const ACTIVITY_LABELS: Record<(typeof XAPI_ACTIVITIES)[number], string> = {
  answered: "answered: every attempt",
  completed: "completed: a lesson or course",
  progressed: "progressed: lesson progress",
  mastered: "mastered: a CEFR level reached",
  earned: "earned: an achievement",
};

export interface EndpointForm {
  name: string;
  endpoint: string;
  version: string;
  authType: string;
  username: string;
  password: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  activities: string[];
  actorFormat: string;
  enabled: boolean;
}

export const EMPTY_FORM: EndpointForm = {
  name: "",
  endpoint: "",
  version: "1.0.3",
  authType: "basic",
  username: "",
  password: "",
  tokenUrl: "",
  clientId: "",
  clientSecret: "",
  scope: "",
  activities: [...XAPI_ACTIVITIES],
  actorFormat: "account",
  enabled: true,
};

/** The stored endpoint as its form; secret fields are never filled (they are write-only). */
export function formOfEndpoint(row: EndpointRow): EndpointForm {
  return {
    name: row.name,
    endpoint: row.endpoint,
    version: row.version,
    authType: row.authType,
    username: row.username ?? "",
    password: "",
    tokenUrl: row.tokenUrl ?? "",
    clientId: row.clientId ?? "",
    clientSecret: "",
    scope: row.scope ?? "",
    activities: row.activities,
    actorFormat: row.actorFormat,
    enabled: row.enabled,
  };
}

export function formOfPost(posted: Record<string, string[]>): EndpointForm {
  const get = (name: string) => posted[name]?.[0] ?? "";
  return {
    name: get("name").trim(),
    endpoint: get("endpoint").trim(),
    version: get("version"),
    authType: get("auth_type"),
    username: get("username"),
    password: get("password"),
    tokenUrl: get("token_url").trim(),
    clientId: get("client_id"),
    clientSecret: get("client_secret"),
    scope: get("scope").trim(),
    activities: posted.activities ?? [],
    actorFormat: get("actor_format"),
    enabled: get("enabled") === "true",
  };
}

/** The form as the API's body; an empty secret is left out (to keep the stored one, on an edit). */
export function bodyOf(form: EndpointForm) {
  const auth =
    form.authType === "oauth2"
      ? {
          type: "oauth2",
          token_url: form.tokenUrl,
          client_id: form.clientId,
          ...(form.clientSecret ? { client_secret: form.clientSecret } : {}),
          ...(form.scope ? { scope: form.scope } : {}),
        }
      : {
          type: form.authType,
          username: form.username,
          ...(form.password ? { password: form.password } : {}),
        };
  return {
    name: form.name,
    endpoint: form.endpoint,
    version: form.version,
    auth,
    activities: form.activities,
    actor_format: form.actorFormat,
    enabled: form.enabled,
  };
}

export function EndpointFields({ form, editing }: { form: EndpointForm; editing: boolean }) {
  const keep = editing ? "Leave empty to keep the stored one. " : "";
  return (
    <>
      <label for="name">{LABELS.name}</label>
      <input id="name" name="name" type="text" required maxlength={200} value={form.name} />
      <label for="endpoint">{LABELS.endpoint}</label>
      <p class="hint" id="endpoint-hint">
        The LRS's xAPI base URL (<code>about</code> and <code>statements</code> are below it), e.g.
        https://lrs.example.com/xapi/.
      </p>
      <input
        id="endpoint"
        name="endpoint"
        type="text"
        inputmode="url"
        required
        value={form.endpoint}
        aria-describedby="endpoint-hint"
      />
      <Select
        id="version"
        label={LABELS.version}
        value={form.version}
        options={XAPI_VERSIONS.map((v) => ({ value: v, label: v }))}
      />
      <fieldset>
        <legend>{LABELS.auth}</legend>
        <Select
          id="auth_type"
          label="Type"
          value={form.authType}
          options={[
            { value: "basic", label: "HTTP Basic" },
            { value: "oauth2", label: "OAuth 2 client credentials" },
          ]}
        />
        <p class="hint">
          Secrets are write-only: they are never shown again. {keep}With HTTP Basic, fill in the username and
          password; with OAuth 2, the token URL, client id and secret.
        </p>
        <label for="username">{LABELS["auth.username"]}</label>
        <input id="username" name="username" type="text" value={form.username} autocomplete="off" />
        <label for="password">{LABELS["auth.password"]}</label>
        <input id="password" name="password" type="password" value="" autocomplete="new-password" />
        <label for="token_url">{LABELS["auth.token_url"]}</label>
        <input id="token_url" name="token_url" type="text" inputmode="url" value={form.tokenUrl} />
        <label for="client_id">{LABELS["auth.client_id"]}</label>
        <input id="client_id" name="client_id" type="text" value={form.clientId} autocomplete="off" />
        <label for="client_secret">{LABELS["auth.client_secret"]}</label>
        <input id="client_secret" name="client_secret" type="password" value="" autocomplete="new-password" />
        <label for="scope">{LABELS["auth.scope"]}</label>
        <input id="scope" name="scope" type="text" value={form.scope} />
      </fieldset>
      <fieldset>
        <legend>{LABELS.activities}</legend>
        <div class="checks">
          {XAPI_ACTIVITIES.map((a) => (
            <label class="check">
              <input type="checkbox" name="activities" value={a} checked={form.activities.includes(a)} />
              <span>{ACTIVITY_LABELS[a]}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <Select
        id="actor_format"
        label={LABELS.actor_format}
        value={form.actorFormat}
        options={XAPI_ACTOR_FORMATS.map((f) => ({
          value: f,
          label:
            f === "account" ? "account: an opaque user id (default)" : "mbox: the member's e-mail address",
        }))}
      />
      <label class="check">
        <input type="checkbox" name="enabled" value="true" checked={form.enabled} />
        <span>Enabled: forward statements to this LRS</span>
      </label>
    </>
  );
}

/** An endpoint's health: its last 24 hours, and whether it is failing. */
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

export function NewEndpoint({
  session,
  form,
  errors,
}: {
  session: DashboardSession;
  form: EndpointForm;
  errors: string[];
}) {
  return (
    <>
      <h1>Add an xAPI endpoint</h1>
      <ErrorSummary errors={errors} />
      <form method="post" action={XAPI_PATH}>
        <CsrfField token={session.csrf} />
        <EndpointFields form={form} editing={false} />
        <div class="actions">
          <button type="submit">Add endpoint</button>
          <a class="button secondary" href={XAPI_PATH}>
            Cancel
          </a>
        </div>
      </form>
    </>
  );
}

/** What the LRS answered to the test call. */
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
