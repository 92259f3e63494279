import { XAPI_ACTIVITIES, XAPI_ACTOR_FORMATS, XAPI_VERSIONS } from "../../db/schema";
import type { listStatements } from "../../domains/xapi/forwarding-log";
import type { EndpointRow } from "../../domains/xapi/service";
import type { testEndpoint } from "../../domains/xapi/test-call";
import { Select } from "../components";
import { CsrfField, ErrorSummary } from "../layout";
import { XAPI_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/** The xAPI section's endpoint form: its fields (secrets write-only), reading it, and the API body it makes. */

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
