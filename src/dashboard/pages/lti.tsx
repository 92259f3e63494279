import { LAUNCH_KINDS, LAUNCH_STATUSES } from "../../db/schema";
import type { LaunchRow } from "../../domains/lti/launch/launch-log";
import type { ConsumerRow } from "../../domains/lti/registrations/service";
import { toolUrls } from "../../domains/lti/registrations/tool-urls";
import {
  ActionForm,
  Col,
  ConfirmForm,
  CopyField,
  EmptyState,
  FilterBar,
  ListTable,
  Notice,
  Select,
  StatusBadge,
} from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import { LTI_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/** The LTI section's views and form reading; routes/lti.tsx holds the handlers. */

export const PER_PAGE = 25;
export const LAUNCHES_PATH = `${LTI_PATH}/launches`;
export const registrationPath = (id: string) => `${LTI_PATH}/registrations/${encodeURIComponent(id)}`;
export const LABELS = {
  name: "Name",
  issuer: "Issuer",
  client_id: "Client id",
  deployment_ids: "Deployment ids",
  auth_login_url: "Authorization URL",
  auth_token_url: "Token URL",
  jwks_url: "Platform key set URL",
  auth_token_audience: "Token audience",
};
export const NOTICES: Record<string, string> = {
  created: "The registration was added. Paste the values below into your LMS.",
  saved: "The registration was saved.",
  deleted: "The registration was deleted; its launch log stays.",
};

export interface RegistrationForm {
  name: string;
  issuer: string;
  clientId: string;
  deploymentIds: string;
  authLoginUrl: string;
  authTokenUrl: string;
  jwksUrl: string;
  audience: string;
}

export const EMPTY_FORM: RegistrationForm = {
  name: "",
  issuer: "",
  clientId: "",
  deploymentIds: "",
  authLoginUrl: "",
  authTokenUrl: "",
  jwksUrl: "",
  audience: "",
};

export function formOfRegistration(row: ConsumerRow): RegistrationForm {
  return {
    name: row.name,
    issuer: row.issuer,
    clientId: row.clientId,
    deploymentIds: row.deploymentIds.join("\n"),
    authLoginUrl: row.authLoginUrl,
    authTokenUrl: row.authTokenUrl,
    jwksUrl: row.jwksUrl,
    audience: row.authTokenAudience ?? "",
  };
}

/** The form as the API's body (deployment ids one a line; an empty audience is none). */
export function bodyOf(form: RegistrationForm) {
  return {
    name: form.name,
    issuer: form.issuer,
    client_id: form.clientId,
    deployment_ids: form.deploymentIds
      .split(/\r?\n/)
      .map((d) => d.trim())
      .filter((d) => d !== ""),
    auth_login_url: form.authLoginUrl,
    auth_token_url: form.authTokenUrl,
    jwks_url: form.jwksUrl,
    auth_token_audience: form.audience || null,
  };
}

function TextField({
  id,
  value,
  hint,
  url,
  required = true,
}: {
  id: keyof typeof LABELS;
  value: string;
  hint?: string;
  url?: boolean;
  required?: boolean;
}) {
  return (
    <>
      <label for={id}>{LABELS[id]}</label>
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <input
        id={id}
        name={id}
        type="text"
        inputmode={url ? "url" : undefined}
        required={required}
        value={value}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
    </>
  );
}

/** The platform's values, as its LTI 1.3 tool configuration shows them. */
export function RegistrationFields({ form }: { form: RegistrationForm }) {
  return (
    <>
      <TextField id="name" value={form.name} hint="For you, e.g. “Canvas (production)”." />
      <TextField
        id="issuer"
        value={form.issuer}
        url
        hint="The platform's issuer, e.g. https://canvas.instructure.com."
      />
      <TextField id="client_id" value={form.clientId} hint="The client id the LMS gave this tool." />
      <label for="deployment_ids">{LABELS.deployment_ids}</label>
      <p class="hint" id="deployment_ids-hint">
        One a line.
      </p>
      <textarea
        id="deployment_ids"
        name="deployment_ids"
        rows={3}
        required
        aria-describedby="deployment_ids-hint"
      >
        {form.deploymentIds}
      </textarea>
      <TextField
        id="auth_login_url"
        value={form.authLoginUrl}
        url
        hint="The platform's OIDC authorization endpoint."
      />
      <TextField
        id="auth_token_url"
        value={form.authTokenUrl}
        url
        hint="The platform's OAuth 2 token endpoint."
      />
      <TextField id="jwks_url" value={form.jwksUrl} url hint="The platform's public key set (JWKS)." />
      <TextField
        id="auth_token_audience"
        value={form.audience}
        required={false}
        hint="Optional: the audience of the token request when the platform wants one other than its token URL."
      />
    </>
  );
}

export function formOfPost(posted: Record<string, string[]>): RegistrationForm {
  const get = (name: string) => (posted[name]?.[0] ?? "").trim();
  return {
    name: get("name"),
    issuer: get("issuer"),
    clientId: get("client_id"),
    deploymentIds: get("deployment_ids"),
    authLoginUrl: get("auth_login_url"),
    authTokenUrl: get("auth_token_url"),
    jwksUrl: get("jwks_url"),
    audience: get("auth_token_audience"),
  };
}

export function RegistrationList({
  session,
  rows,
  total,
  page,
  notice,
  link,
}: {
  session: DashboardSession;
  rows: ConsumerRow[];
  total: number;
  page: number;
  notice?: string;
  /** A registration link just created: shown this once. */
  link?: { url: string; expires_at: string };
}) {
  return (
    <>
      <h1>LTI</h1>
      <Notice text={notice} />
      <p>
        LTI 1.3 lets your LMS (Canvas, Moodle, Blackboard, D2L) launch Lingua courses and lessons with single
        sign-on, and receive grades back. Register each LMS once.
      </p>
      <div class="actions">
        <a class="button" href={`${LTI_PATH}/new`}>
          Add registration
        </a>
        <ActionForm
          action={`${LTI_PATH}/registration-link`}
          csrf={session.csrf}
          button="Create a registration link"
          secondary
        />
        <a class="button secondary" href={LAUNCHES_PATH}>
          Launch log
        </a>
      </div>
      {link ? (
        <div class="card">
          <CopyField
            id="registration-link"
            label="Registration link"
            value={link.url}
            hint={
              <>
                Paste it where your LMS registers a tool by URL (LTI Dynamic Registration). Single use, valid
                until <When iso={link.expires_at} />; shown only this once.
              </>
            }
          />
        </div>
      ) : null}
      <ListTable
        label="LTI registrations"
        count={rows.length}
        total={total}
        path={LTI_PATH}
        page={page}
        perPage={PER_PAGE}
        empty={
          <EmptyState title="No LMS registered yet">
            <p>
              Create a registration link and paste it into your LMS (it registers itself), or add a
              registration by hand with the values your LMS shows.
            </p>
          </EmptyState>
        }
        head={
          <>
            <Col>Name</Col>
            <Col>Issuer</Col>
            <Col>Client id</Col>
            <Col>Deployments</Col>
            <Col>Added</Col>
          </>
        }
        rows={rows.map((r) => (
          <tr>
            <th scope="row">
              <a href={registrationPath(r.id)}>{r.name}</a>
            </th>
            <td>
              <code>{r.issuer}</code>
            </td>
            <td>
              <code>{r.clientId}</code>
            </td>
            <td>{r.deploymentIds.length}</td>
            <td>
              <When iso={r.createdAt} />
            </td>
          </tr>
        ))}
      />
    </>
  );
}

export function NewRegistration({
  session,
  form,
  errors,
}: {
  session: DashboardSession;
  form: RegistrationForm;
  errors: string[];
}) {
  return (
    <>
      <h1>Add an LTI registration</h1>
      <p>
        Copy these values from your LMS's LTI 1.3 developer key or tool configuration. Easier: a registration
        link, which your LMS uses to register Lingua by itself.
      </p>
      <ErrorSummary errors={errors} />
      <form method="post" action={LTI_PATH}>
        <CsrfField token={session.csrf} />
        <RegistrationFields form={form} />
        <div class="actions">
          <button type="submit">Add registration</button>
          <a class="button secondary" href={LTI_PATH}>
            Cancel
          </a>
        </div>
      </form>
    </>
  );
}

/** The values an LMS administrator pastes into the platform, each with a copy button. */
export function ToolValues({ row, origin }: { row: ConsumerRow; origin: string }) {
  const urls = toolUrls(origin, row.id);
  return (
    <section aria-labelledby="values-h" class="card">
      <h2 id="values-h">Values for your LMS</h2>
      <CopyField
        id="login-url"
        label="OIDC login URL"
        value={urls.login_url}
        hint="Canvas: “OpenID Connect Initiation Url”; Moodle: “Initiate login URL”."
      />
      <CopyField
        id="launch-url"
        label="Target link URI and redirect URI"
        value={urls.launch_url}
        hint="Canvas: “Target Link URI” and “Redirect URIs”; Moodle: “Tool URL” and “Redirection URI(s)”."
      />
      <CopyField
        id="jwks-url"
        label="Public key set URL"
        value={urls.jwks_url}
        hint="Canvas: “Public JWK URL”; Moodle: “Public keyset”."
      />
    </section>
  );
}

export function RegistrationDetail({
  session,
  row,
  origin,
  form,
  errors,
  notice,
}: {
  session: DashboardSession;
  row: ConsumerRow;
  origin: string;
  form: RegistrationForm;
  errors: string[];
  notice?: string;
}) {
  const path = registrationPath(row.id);
  return (
    <>
      <h1>{row.name}</h1>
      <Notice text={notice} />
      <ToolValues row={row} origin={origin} />
      <div class="actions">
        <a class="button secondary" href={`${LAUNCHES_PATH}?consumer_id=${encodeURIComponent(row.id)}`}>
          Launches of this registration
        </a>
      </div>
      <section aria-labelledby="edit-h">
        <h2 id="edit-h">Platform settings</h2>
        <ErrorSummary errors={errors} />
        <form method="post" action={path}>
          <CsrfField token={session.csrf} />
          <RegistrationFields form={form} />
          <div class="actions">
            <button type="submit">Save</button>
          </div>
        </form>
      </section>
      <ConfirmForm
        action={`${path}/delete`}
        csrf={session.csrf}
        summary="Delete this registration…"
        text="Delete the registration? Launches from this LMS are refused from now on and its grade passback stops; the launch log stays. This cannot be undone."
        button="Delete registration"
      />
    </>
  );
}

export interface LaunchFilters {
  status: string;
  kind: string;
  consumer: string;
}

export function LaunchLog({
  rows,
  total,
  page,
  filters,
  registrations,
}: {
  rows: LaunchRow[];
  total: number;
  page: number;
  filters: LaunchFilters;
  registrations: ConsumerRow[];
}) {
  const query: Record<string, string> = {};
  if (filters.status) query.status = filters.status;
  if (filters.kind) query.kind = filters.kind;
  if (filters.consumer) query.consumer_id = filters.consumer;
  const names = new Map(registrations.map((r) => [r.id, r.name]));
  const filtered = Object.keys(query).length > 0;
  return (
    <>
      <h1>LTI launch log</h1>
      <p>Every launch from your LMS, accepted or refused, with the reason of each refusal. Newest first.</p>
      <FilterBar path={LAUNCHES_PATH} label="Filter the launches" active={filtered}>
        <Select
          id="status"
          label="Status"
          any="Every status"
          value={filters.status}
          options={LAUNCH_STATUSES.map((s) => ({ value: s, label: s }))}
        />
        <Select
          id="kind"
          label="Kind"
          any="Every kind"
          value={filters.kind}
          options={LAUNCH_KINDS.map((k) => ({ value: k, label: k.replace("_", " ") }))}
        />
        <Select
          id="consumer_id"
          label="Registration"
          any="Every registration"
          value={filters.consumer}
          options={registrations.map((r) => ({ value: r.id, label: r.name }))}
        />
      </FilterBar>
      <ListTable
        label="Launches"
        count={rows.length}
        total={total}
        path={LAUNCHES_PATH}
        query={query}
        page={page}
        perPage={PER_PAGE}
        empty={
          <EmptyState title={filtered ? "No launch matches these filters" : "No launches yet"}>
            <p>
              {filtered
                ? "Change the filters, or show every launch."
                : "Add a Lingua link to a course in your LMS and open it: the launch appears here."}
            </p>
          </EmptyState>
        }
        head={
          <>
            <Col>When</Col>
            <Col>Status</Col>
            <Col>Registration</Col>
            <Col>Kind</Col>
            <Col>User</Col>
            <Col>Reason</Col>
          </>
        }
        rows={rows.map((l) => (
          <tr>
            <td>
              <When iso={l.createdAt} />
            </td>
            <td>
              <StatusBadge text={l.status} warn={l.status === "failed"} />
            </td>
            <td>{l.consumerId ? (names.get(l.consumerId) ?? <code>{l.consumerId}</code>) : "—"}</td>
            <td>{l.kind ? l.kind.replace("_", " ") : "—"}</td>
            <td>{l.userId ? <code>{l.userId}</code> : l.sub ? <code>{l.sub}</code> : "—"}</td>
            <td>
              {l.failureReason ? <code>{l.failureReason}</code> : null}
              {l.failureDetail ? <p class="hint">{l.failureDetail}</p> : null}
              {l.targetTitle ? <span>{l.targetTitle}</span> : null}
            </td>
          </tr>
        ))}
      />
    </>
  );
}
