import type { ConsumerRow } from "../../domains/lti/registrations/service";

/** An LTI registration's form: the platform's values, reading them, and the API body they make. */

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
