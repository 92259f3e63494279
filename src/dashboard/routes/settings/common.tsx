import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { AppEnv } from "../../../env";
import { ApiError, type FieldError } from "../../../platform/errors";
import { html } from "../../http";
import { Layout } from "../../layout";
import { INSTITUTION_SETTINGS_PATH, INSTITUTIONS_PATH } from "../../prefixes";

/** What the settings pages share: their labels, their layout, and how a refusal is shown. */
export const SECTION = "institution";
export const SSO_PATH = `${INSTITUTION_SETTINGS_PATH}/sso`;
export const LABELS: Record<string, string> = {
  name: "Name",
  locale: "Locale",
  time_zone: "Time zone",
  "branding.display_name": "Display name",
  "branding.logo_url": "Logo URL",
  "branding.primary_color": "Primary colour",
  "branding.accent_color": "Accent colour",
  type: "Protocol",
  state: "State",
  enforced: "Enforced",
  domains: "Domains",
  saml: "SAML",
  "saml.metadata_xml": "Metadata XML",
  "saml.metadata_url": "Metadata URL",
  "saml.idp_entity_id": "IdP entity id",
  "saml.sso_url": "IdP sign-in URL",
  "saml.certificates": "Certificates",
  oidc: "OpenID Connect",
  "oidc.issuer": "Issuer",
  "oidc.client_id": "Client id",
  "oidc.client_secret": "Client secret",
  "oidc.scopes": "Scopes",
};
export const NOTICES: Record<string, string> = {
  saved: "The settings were saved. Analytics shows the new branding now.",
  sso: "The SSO settings were saved.",
  verified: "The domain is verified: its members can sign in through your connection.",
};

/** Validation errors named by the form's labels: the field's own, else its object's (`domains.1` → Domains). */
export function messages(errors: readonly FieldError[]): string[] {
  return errors.map((e) => {
    const parts = e.path.split(".");
    let label: string | undefined;
    for (let n = parts.length; n > 0 && !label; n--) label = LABELS[parts.slice(0, n).join(".")];
    return `${label ?? (e.path || "Form")}: ${e.message}`;
  });
}

/** A service's refusal shown on the form; anything but a client error is thrown on. */
export function refusalMessages(error: unknown): { errors: string[]; status: number } {
  // A DNS resolver that did not answer (503) is worth a sentence on the page too.
  if (!(error instanceof ApiError) || (error.status >= 500 && error.code !== "service_unavailable"))
    throw error;
  return { errors: error.errors ? messages(error.errors) : [error.message], status: error.status };
}

export function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return html(
    c,
    <Layout title={title} nonce={c.var.nonce} session={c.var.dashboard} current={SECTION}>
      <p class="crumbs">Settings</p>
      {children}
    </Layout>,
    status,
  );
}

export function needInstitution(c: Context<AppEnv>) {
  return page(
    c,
    "Institution settings",
    <>
      <h1>Institution settings</h1>
      <div class="card empty">
        <p>Choose the institution whose settings you want to look after.</p>
        <p>
          <a class="button" href={INSTITUTIONS_PATH}>
            Choose an institution
          </a>
        </p>
      </div>
    </>,
  );
}
