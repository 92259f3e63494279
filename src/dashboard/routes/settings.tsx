import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { SSO_STATES, type SsoMapping } from "../../db/schema";
import { readCompliance } from "../../domains/institutions/compliance/service";
import { UpdateInstitutionBody } from "../../domains/institutions/schemas";
import { getInstitution, updateInstitution } from "../../domains/institutions/service";
import { PutSsoBody } from "../../domains/institutions/sso/schemas";
import { putSso, readSso, verifySsoDomain } from "../../domains/institutions/sso/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { ApiError, type FieldError } from "../../platform/errors";
import { field, formOf, issuesOf } from "../forms";
import { html } from "../http";
import { CsrfField, ErrorSummary, Layout, When } from "../layout";
import { AA_GRAPHICS, AA_TEXT, contrast, isHexColour } from "../pages/colours";
import { ANALYTICS_PATH, INSTITUTION_SETTINGS_PATH, INSTITUTIONS_PATH } from "../prefixes";
import { checkCsrf, type DashboardSession, signedIn } from "../session";

const SECTION = "institution";
const SSO_PATH = `${INSTITUTION_SETTINGS_PATH}/sso`;
const LABELS: Record<string, string> = {
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
const NOTICES: Record<string, string> = {
  saved: "The settings were saved. Analytics shows the new branding now.",
  sso: "The SSO settings were saved.",
  verified: "The domain is verified: its members can sign in through your connection.",
};
const STATE_LABELS: Record<(typeof SSO_STATES)[number], string> = {
  draft: "Draft (being set up)",
  active: "Active",
  inactive: "Inactive",
};
const COMPLIANCE_LABELS: Record<string, string> = {
  dpa: "Data processing agreement (DPA)",
  gdpr: "GDPR documentation",
  ferpa: "FERPA",
  coppa: "COPPA",
  soc2_report: "SOC 2 report",
  vpat: "Accessibility conformance report (VPAT)",
};

/** Validation errors named by the form's labels: the field's own, else its object's (`domains.1` → Domains). */
function messages(errors: readonly FieldError[]): string[] {
  return errors.map((e) => {
    const parts = e.path.split(".");
    let label: string | undefined;
    for (let n = parts.length; n > 0 && !label; n--) label = LABELS[parts.slice(0, n).join(".")];
    return `${label ?? (e.path || "Form")}: ${e.message}`;
  });
}

/** A service's refusal shown on the form; anything but a client error is thrown on. */
function refusalMessages(error: unknown): { errors: string[]; status: number } {
  // A DNS resolver that did not answer (503) is worth a sentence on the page too.
  if (!(error instanceof ApiError) || (error.status >= 500 && error.code !== "service_unavailable"))
    throw error;
  return { errors: error.errors ? messages(error.errors) : [error.message], status: error.status };
}

/** Warnings about a branding's colours (WCAG 2.x AA), before or after saving. */
export function contrastWarnings(primary: string, accent: string): string[] {
  const out: string[] = [];
  if (isHexColour(primary)) {
    const ratio = contrast(primary, "#ffffff");
    if (ratio < AA_TEXT)
      out.push(
        `Primary colour ${primary}: white text on it has a contrast of ${ratio.toFixed(1)}:1, below the 4.5:1 that WCAG AA asks of text. The dashboard darkens it for links, buttons and chart lines; your own apps may not.`,
      );
  }
  if (isHexColour(accent)) {
    const ratio = contrast(accent, "#ffffff");
    if (ratio < AA_GRAPHICS)
      out.push(
        `Accent colour ${accent}: on white it has a contrast of ${ratio.toFixed(1)}:1, below the 3:1 that WCAG AA asks of graphics such as chart bars.`,
      );
  }
  return out;
}

/** A colour's sample, drawn as SVG (the CSP allows no inline style). */
function Swatch({ colour }: { colour: string }) {
  if (!isHexColour(colour)) return null;
  return (
    <svg class="swatch-svg" width="20" height="20" viewBox="0 0 20 20" aria-hidden="true">
      <rect x="0.5" y="0.5" width="19" height="19" rx="3" fill={colour} stroke="#8a93a6" />
    </svg>
  );
}

/** A branding colour's field (`#rrggbb`, described by the hint `#colour-hint`) with its sample. */
function ColourField({
  name,
  value,
  disabled,
  children,
}: {
  name: "primary_color" | "accent_color";
  value: string;
  disabled: boolean;
  children?: Child;
}) {
  return (
    <>
      <label for={name}>{LABELS[`branding.${name}`]}</label>
      {children}
      <div class="secret">
        <input
          id={name}
          name={name}
          type="text"
          maxlength={7}
          pattern="#[0-9a-fA-F]{6}"
          value={value}
          aria-describedby="colour-hint"
          disabled={disabled}
        />
        <Swatch colour={value} />
      </div>
    </>
  );
}

/** A value to give the IdP, in a read-only field with a copy button (shown when the clipboard works). */
function CopyValue({ id, label, value }: { id: string; label: string; value: string }) {
  return (
    <div>
      <label for={id}>{label}</label>
      <div class="secret">
        <input id={id} type="text" readonly value={value} />
        <button type="button" class="secondary" data-copy={id} hidden>
          Copy
        </button>
      </div>
    </div>
  );
}

interface GeneralForm {
  name: string;
  locale: string;
  timeZone: string;
  displayName: string;
  logoUrl: string;
  primary: string;
  accent: string;
}

function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return html(
    c,
    <Layout title={title} nonce={c.var.nonce} session={c.var.dashboard} current={SECTION}>
      <p class="crumbs">Settings</p>
      {children}
    </Layout>,
    status,
  );
}

function needInstitution(c: Context<AppEnv>) {
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

type Sso = Awaited<ReturnType<typeof readSso>>;

function SsoSummary({ sso, session }: { sso: Sso; session: DashboardSession }) {
  const mayWrite = holdsAbility(session.principal, "sso:write").allowed;
  return (
    <section class="card" aria-labelledby="sso-heading">
      <h2 id="sso-heading">Single sign-on</h2>
      {sso.type === null ? (
        <p>
          Not set up. Connect your identity provider (SAML 2.0 or OpenID Connect) so members of your e-mail
          domains sign in with their organisation account.
        </p>
      ) : (
        <dl class="facts">
          <dt>Protocol</dt>
          <dd>{sso.type === "saml" ? "SAML 2.0" : "OpenID Connect"}</dd>
          <dt>State</dt>
          <dd>
            <span class={sso.state === "active" ? "badge" : "badge warn"}>{STATE_LABELS[sso.state]}</span>
            {sso.enforced ? " · enforced: members of the domains sign in only through SSO" : null}
          </dd>
          {sso.saml ? (
            <>
              <dt>IdP entity id</dt>
              <dd>
                <code>{sso.saml.idp_entity_id ?? "—"}</code>
              </dd>
              <dt>IdP sign-in URL</dt>
              <dd>
                <code>{sso.saml.sso_url ?? "—"}</code>
              </dd>
              {sso.saml.metadata_url ? (
                <>
                  <dt>Metadata URL</dt>
                  <dd>
                    <code>{sso.saml.metadata_url}</code>
                  </dd>
                </>
              ) : null}
            </>
          ) : null}
          {sso.oidc ? (
            <>
              <dt>Issuer</dt>
              <dd>
                <code>{sso.oidc.issuer ?? "—"}</code>
              </dd>
              <dt>Client id</dt>
              <dd>
                <code>{sso.oidc.client_id ?? "—"}</code>
                {sso.oidc.client_secret_set ? " · client secret stored" : " · no client secret"}
              </dd>
              <dt>Scopes</dt>
              <dd>{sso.oidc.scopes.join(" ")}</dd>
            </>
          ) : null}
          <dt>Last changed</dt>
          <dd>
            <When iso={sso.updated_at} />
          </dd>
        </dl>
      )}
      {sso.saml && sso.saml.certificates.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption>IdP signing certificates</caption>
            <thead>
              <tr>
                <th scope="col">Subject</th>
                <th scope="col">Valid until</th>
                <th scope="col">SHA-256 fingerprint</th>
              </tr>
            </thead>
            <tbody>
              {sso.saml.certificates.map((cert) => (
                <tr>
                  <th scope="row">{cert.subject}</th>
                  <td>
                    <When iso={cert.not_after} />{" "}
                    {cert.expired ? <span class="badge warn">expired</span> : null}
                  </td>
                  <td>
                    <code class="mono">{cert.fingerprint_sha256}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {sso.saml ? (
        <fieldset>
          <legend>Give these to your identity provider</legend>
          <CopyValue id="sp-entity-id" label="Entity id (audience)" value={sso.saml.sp.entity_id} />
          <CopyValue
            id="sp-acs-url"
            label="Assertion consumer service (ACS) URL"
            value={sso.saml.sp.acs_url}
          />
          <CopyValue id="sp-metadata-url" label="Our metadata URL" value={sso.saml.sp.metadata_url} />
        </fieldset>
      ) : null}
      {sso.oidc ? (
        <fieldset>
          <legend>Give this to your identity provider</legend>
          <CopyValue id="oidc-redirect-uri" label="Redirect URI" value={sso.oidc.redirect_uri} />
        </fieldset>
      ) : null}
      {sso.domain_verifications.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption>Domains</caption>
            <thead>
              <tr>
                <th scope="col">Domain</th>
                <th scope="col">Status</th>
                <th scope="col">DNS record to create</th>
                <th scope="col">
                  <span class="visually-hidden">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sso.domain_verifications.map((d, i) => (
                <tr>
                  <th scope="row">{d.domain}</th>
                  <td>
                    <span class={d.status === "verified" ? "badge" : "badge warn"}>{d.status}</span>
                    {d.verified_at ? (
                      <>
                        {" "}
                        <When iso={d.verified_at} />
                      </>
                    ) : null}
                  </td>
                  <td>
                    {d.status === "verified" ? (
                      "—"
                    ) : (
                      <>
                        <span class="hint">{`TXT at ${d.txt_name}:`}</span>
                        <div class="secret">
                          <input
                            id={`txt-${i}`}
                            type="text"
                            readonly
                            value={d.txt_value}
                            aria-label={`TXT value for ${d.domain}`}
                          />
                          <button type="button" class="secondary" data-copy={`txt-${i}`} hidden>
                            Copy
                          </button>
                        </div>
                      </>
                    )}
                  </td>
                  <td>
                    {d.status !== "verified" && mayWrite ? (
                      <form
                        method="post"
                        action={`${SSO_PATH}/domains/${encodeURIComponent(d.domain)}/verify`}
                      >
                        <CsrfField token={session.csrf} />
                        <button type="submit" class="secondary" aria-label={`Verify ${d.domain}`}>
                          Verify
                        </button>
                      </form>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {mayWrite ? (
        <div class="actions">
          <a class="button" href={SSO_PATH}>
            {sso.type === null ? "Set up single sign-on" : "Edit single sign-on"}
          </a>
        </div>
      ) : null}
    </section>
  );
}

type Compliance = Awaited<ReturnType<typeof readCompliance>>;

function ComplianceCard({ compliance }: { compliance: Compliance }) {
  return (
    <section class="card" aria-labelledby="compliance-heading">
      <h2 id="compliance-heading">Compliance documents</h2>
      <p>
        {compliance.status === "complete"
          ? "Every required document is in place."
          : "Action required: a required document is not signed yet. Lingua's team records documents as they are signed; contact them to sign one."}
      </p>
      <div class="table-wrap">
        <table>
          <caption>Documents</caption>
          <thead>
            <tr>
              <th scope="col">Document</th>
              <th scope="col">Required</th>
              <th scope="col">Status</th>
              <th scope="col">Signed</th>
              <th scope="col">Expires</th>
            </tr>
          </thead>
          <tbody>
            {compliance.documents.map((d) => (
              <tr>
                <th scope="row">
                  {d.document_url ? (
                    <a href={d.document_url}>{COMPLIANCE_LABELS[d.type] ?? d.type}</a>
                  ) : (
                    (COMPLIANCE_LABELS[d.type] ?? d.type)
                  )}
                </th>
                <td>{d.required ? "Yes" : "No"}</td>
                <td>
                  <span
                    class={d.status === "signed" || d.status === "not_applicable" ? "badge" : "badge warn"}
                  >
                    {d.status.replace("_", " ")}
                  </span>
                </td>
                <td>
                  <When iso={d.signed_at} />
                </td>
                <td>
                  <When iso={d.expires_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

async function renderSettings(
  c: Context<AppEnv>,
  options: { form?: GeneralForm; errors?: string[]; status?: number; ssoErrors?: string[] } = {},
) {
  const session = c.var.dashboard;
  enforce(holdsAbility(session.principal, "institutions:read"));
  if (!session.institution) return needInstitution(c);
  const ctx = session.ctx;
  const { institution } = await getInstitution(ctx, session.institution.id);
  const origin = new URL(c.req.url).origin;
  const [sso, compliance] = await Promise.all([
    holdsAbility(session.principal, "sso:read").allowed
      ? readSso(ctx, { institutionId: institution.id, origin })
      : null,
    holdsAbility(session.principal, "compliance:read").allowed ? readCompliance(ctx, institution.id) : null,
  ]);
  const b = institution.branding ?? {};
  const form: GeneralForm = options.form ?? {
    name: institution.name,
    locale: institution.locale,
    timeZone: institution.timeZone,
    displayName: b.display_name ?? "",
    logoUrl: b.logo_url ?? "",
    primary: b.primary_color ?? "",
    accent: b.accent_color ?? "",
  };
  const mayWrite = holdsAbility(session.principal, "members:write").allowed;
  const warnings = contrastWarnings(form.primary, form.accent);
  const notice = NOTICES[c.req.query("notice") ?? ""];
  return page(
    c,
    "Institution settings",
    <>
      <h1>Institution settings</h1>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorSummary errors={[...(options.errors ?? []), ...(options.ssoErrors ?? [])]} />
      <section class="card" aria-labelledby="general-heading">
        <h2 id="general-heading">Name, branding, locale and time zone</h2>
        <form method="post" action={INSTITUTION_SETTINGS_PATH}>
          <CsrfField token={session.csrf} />
          <label for="name">{LABELS.name}</label>
          <input
            id="name"
            name="name"
            type="text"
            maxlength={200}
            required
            value={form.name}
            disabled={!mayWrite}
          />
          <fieldset>
            <legend>Branding</legend>
            <p class="hint">
              Used by <a href={ANALYTICS_PATH}>Analytics</a> and your white-label apps. Leave a field empty to
              clear it.
            </p>
            <label for="display_name">{LABELS["branding.display_name"]}</label>
            <input
              id="display_name"
              name="display_name"
              type="text"
              maxlength={100}
              value={form.displayName}
              disabled={!mayWrite}
            />
            <label for="logo_url">{LABELS["branding.logo_url"]}</label>
            <p class="hint" id="logo-hint">
              An https address of an image (SVG or PNG), shown about 48 pixels high.
            </p>
            <input
              id="logo_url"
              name="logo_url"
              type="url"
              maxlength={2048}
              value={form.logoUrl}
              aria-describedby="logo-hint"
              disabled={!mayWrite}
            />
            <ColourField name="primary_color" value={form.primary} disabled={!mayWrite}>
              <p class="hint" id="colour-hint">
                As <code>#rrggbb</code>, e.g. <code>#1a73e8</code>.
              </p>
            </ColourField>
            <ColourField name="accent_color" value={form.accent} disabled={!mayWrite} />
            {warnings.length > 0 ? (
              <ul class="contrast-warnings" aria-label="Contrast warnings">
                {warnings.map((w) => (
                  <li class="warn-text">{w}</li>
                ))}
              </ul>
            ) : null}
          </fieldset>
          <label for="locale">{LABELS.locale}</label>
          <p class="hint" id="locale-hint">
            A language tag such as <code>en-GB</code> or <code>es</code>: how numbers and dates are written.
          </p>
          <input
            id="locale"
            name="locale"
            type="text"
            maxlength={35}
            required
            value={form.locale}
            aria-describedby="locale-hint"
            disabled={!mayWrite}
          />
          <label for="time_zone">{LABELS.time_zone}</label>
          <p class="hint" id="tz-hint">
            An IANA time zone such as <code>Europe/London</code>: where “today” ends for analytics' default
            range.
          </p>
          <input
            id="time_zone"
            name="time_zone"
            type="text"
            maxlength={64}
            required
            value={form.timeZone}
            aria-describedby="tz-hint"
            disabled={!mayWrite}
          />
          {mayWrite ? (
            <div class="actions">
              <button type="submit">Save settings</button>
            </div>
          ) : (
            <p class="hint">Only the institution's administrators change these settings.</p>
          )}
        </form>
      </section>
      {sso ? <SsoSummary sso={sso} session={session} /> : null}
      {compliance ? <ComplianceCard compliance={compliance} /> : null}
    </>,
    options.status ?? 200,
  );
}

// --- SSO edit -------------------------------------------------------------------------------------

interface SsoForm {
  type: string;
  state: string;
  enforced: boolean;
  domains: string;
  source: string;
  metadataXml: string;
  metadataUrl: string;
  idpEntityId: string;
  ssoUrl: string;
  certificates: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
}

function ssoFormOf(sso: Sso): SsoForm {
  return {
    type: sso.type ?? "saml",
    state: sso.state === "inactive" && sso.type === null ? "draft" : sso.state,
    enforced: sso.enforced,
    domains: sso.domains.join("\n"),
    source: sso.saml?.metadata_url ? "url" : "fields",
    metadataXml: "",
    metadataUrl: sso.saml?.metadata_url ?? "",
    idpEntityId: sso.saml?.idp_entity_id ?? "",
    ssoUrl: sso.saml?.sso_url ?? "",
    certificates: (sso.saml?.certificates ?? []).map((c) => c.pem.trim()).join("\n"),
    issuer: sso.oidc?.issuer ?? "",
    clientId: sso.oidc?.client_id ?? "",
    clientSecret: "",
    scopes: (sso.oidc?.scopes ?? ["openid", "email", "profile"]).join(" "),
  };
}

/** PEM blocks of a pasted text (one or more certificates). */
function pemBlocks(text: string): string[] {
  return (
    text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ??
    (text.trim() ? [text.trim()] : [])
  );
}

function SsoEditPage({ session, form, sso }: { session: DashboardSession; form: SsoForm; sso: Sso }) {
  const radio = (name: string, value: string, current: string, label: string, hint?: string) => (
    <label class="check">
      <input type="radio" name={name} value={value} checked={current === value} />
      <span>
        {label}
        {hint ? <small>{hint}</small> : null}
      </span>
    </label>
  );
  return (
    <form method="post" action={SSO_PATH}>
      <CsrfField token={session.csrf} />
      <fieldset>
        <legend>{LABELS.type}</legend>
        {radio(
          "type",
          "saml",
          form.type,
          "SAML 2.0",
          "Okta, Microsoft Entra ID, Google Workspace, ADFS, Shibboleth …",
        )}
        {radio("type", "oidc", form.type, "OpenID Connect")}
      </fieldset>
      <fieldset>
        <legend>SAML 2.0 (with “SAML 2.0”)</legend>
        <p class="hint">Give your identity provider's metadata in one of three ways.</p>
        {radio("source", "xml", form.source, "Paste the metadata XML")}
        {radio("source", "url", form.source, "Metadata URL", "Fetched now, and the address kept.")}
        {radio("source", "fields", form.source, "Enter the fields")}
        <label for="metadata_xml">{LABELS["saml.metadata_xml"]}</label>
        <textarea id="metadata_xml" name="metadata_xml" rows={6} class="mono">
          {form.metadataXml}
        </textarea>
        <label for="metadata_url">{LABELS["saml.metadata_url"]}</label>
        <input id="metadata_url" name="metadata_url" type="url" maxlength={2048} value={form.metadataUrl} />
        <label for="idp_entity_id">{LABELS["saml.idp_entity_id"]}</label>
        <input
          id="idp_entity_id"
          name="idp_entity_id"
          type="text"
          maxlength={1024}
          value={form.idpEntityId}
        />
        <label for="sso_url">{LABELS["saml.sso_url"]}</label>
        <input id="sso_url" name="sso_url" type="url" maxlength={2048} value={form.ssoUrl} />
        <label for="certificates">{LABELS["saml.certificates"]}</label>
        <p class="hint" id="cert-hint">
          PEM, one or more (during a rotation), each from <code>-----BEGIN CERTIFICATE-----</code> to{" "}
          <code>-----END CERTIFICATE-----</code>.
        </p>
        <textarea id="certificates" name="certificates" rows={6} class="mono" aria-describedby="cert-hint">
          {form.certificates}
        </textarea>
      </fieldset>
      <fieldset>
        <legend>OpenID Connect (with “OpenID Connect”)</legend>
        <label for="issuer">{LABELS["oidc.issuer"]}</label>
        <input id="issuer" name="issuer" type="url" maxlength={2048} value={form.issuer} />
        <label for="client_id">{LABELS["oidc.client_id"]}</label>
        <input id="client_id" name="client_id" type="text" maxlength={512} value={form.clientId} />
        <label for="client_secret">{LABELS["oidc.client_secret"]}</label>
        <p class="hint" id="secret-hint">
          {sso.oidc?.client_secret_set
            ? "Stored; leave empty to keep it."
            : "Stored encrypted, never shown again."}
        </p>
        <input
          id="client_secret"
          name="client_secret"
          type="password"
          autocomplete="off"
          maxlength={2048}
          aria-describedby="secret-hint"
        />
        <label for="scopes">{LABELS["oidc.scopes"]}</label>
        <input id="scopes" name="scopes" type="text" value={form.scopes} />
      </fieldset>
      <label for="domains">{LABELS.domains}</label>
      <p class="hint" id="domains-hint">
        Your e-mail domains, one a line (e.g. <code>acme.edu</code>). Each routes sign-ins once you prove it
        with a DNS record, shown after saving.
      </p>
      <textarea id="domains" name="domains" rows={3} aria-describedby="domains-hint">
        {form.domains}
      </textarea>
      <label for="state">{LABELS.state}</label>
      <select id="state" name="state">
        {SSO_STATES.map((s) => (
          <option value={s} selected={form.state === s}>
            {STATE_LABELS[s]}
          </option>
        ))}
      </select>
      <label class="check">
        <input type="checkbox" name="enforced" value="true" checked={form.enforced} />
        <span>
          Enforce single sign-on
          <small>Members of the domains may then sign in only through SSO (needs “Active”).</small>
        </span>
      </label>
      <div class="actions">
        <button type="submit">Save single sign-on</button>
        <a class="button secondary" href={INSTITUTION_SETTINGS_PATH}>
          Cancel
        </a>
      </div>
    </form>
  );
}

async function renderSsoEdit(c: Context<AppEnv>, form: SsoForm | null, errors: string[] = [], status = 200) {
  const session = c.var.dashboard;
  enforce(holdsAbility(session.principal, "sso:write"));
  if (!session.institution) return needInstitution(c);
  const sso = await readSso(session.ctx, {
    institutionId: session.institution.id,
    origin: new URL(c.req.url).origin,
  });
  return page(
    c,
    "Single sign-on",
    <>
      <h1>Single sign-on</h1>
      <ErrorSummary errors={errors} />
      <div class="card">
        <SsoEditPage session={session} form={form ?? ssoFormOf(sso)} sso={sso} />
      </div>
    </>,
    status,
  );
}

function ssoInput(form: SsoForm, mapping: { saml: unknown; oidc: unknown }) {
  const domains = form.domains
    .split(/[\s,]+/)
    .map((d) => d.trim())
    .filter(Boolean);
  const base = { type: form.type, state: form.state, enforced: form.enforced, domains };
  if (form.type === "oidc")
    return {
      ...base,
      oidc: {
        issuer: form.issuer.trim() || null,
        client_id: form.clientId.trim() || null,
        ...(form.clientSecret ? { client_secret: form.clientSecret } : {}),
        scopes: form.scopes.split(/\s+/).filter(Boolean),
        ...(mapping.oidc ? { claim_mapping: mapping.oidc } : {}),
      },
    };
  const saml: Record<string, unknown> = mapping.saml ? { attribute_mapping: mapping.saml } : {};
  if (form.source === "xml") saml.metadata_xml = form.metadataXml;
  else if (form.source === "url") saml.metadata_url = form.metadataUrl.trim() || null;
  else
    Object.assign(saml, {
      idp_entity_id: form.idpEntityId.trim() || null,
      sso_url: form.ssoUrl.trim() || null,
      certificates: pemBlocks(form.certificates),
    });
  return { ...base, saml };
}

/** A stored mapping as PUT takes it back: only the keys that are mapped. */
function mappingInput(mapping: SsoMapping | undefined) {
  if (!mapping) return null;
  return Object.fromEntries(Object.entries(mapping).filter(([, v]) => v !== null));
}

/**
 * Institution settings: name, branding, locale and time zone (`PATCH /api/institutions/{id}`'s
 * service and rules); SSO settings — the summary, the values for the IdP, the domains and their DNS
 * records, and the edit (`PUT …/sso`, `POST …/sso/domains/{domain}/verify`); compliance documents.
 */
export function registerSettings(app: Hono<AppEnv>) {
  app.get(INSTITUTION_SETTINGS_PATH, signedIn, (c) => renderSettings(c));

  app.post(INSTITUTION_SETTINGS_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:write"));
    if (!session.institution) return needInstitution(c);
    const posted = await formOf(c);
    const form: GeneralForm = {
      name: field(posted, "name").trim(),
      locale: field(posted, "locale").trim(),
      timeZone: field(posted, "time_zone").trim(),
      displayName: field(posted, "display_name").trim(),
      logoUrl: field(posted, "logo_url").trim(),
      primary: field(posted, "primary_color").trim(),
      accent: field(posted, "accent_color").trim(),
    };
    const parsed = UpdateInstitutionBody.safeParse({
      name: form.name,
      locale: form.locale,
      time_zone: form.timeZone,
      branding: {
        display_name: form.displayName || null,
        logo_url: form.logoUrl || null,
        primary_color: form.primary || null,
        accent_color: form.accent || null,
      },
    });
    if (!parsed.success)
      return renderSettings(c, { form, errors: messages(issuesOf(parsed.error.issues)), status: 422 });
    try {
      await updateInstitution(session.ctx, { id: session.institution.id, input: parsed.data });
    } catch (error) {
      return renderSettings(c, { form, ...refusalMessages(error) });
    }
    return c.redirect(`${INSTITUTION_SETTINGS_PATH}?notice=saved`, 303);
  });

  app.get(SSO_PATH, signedIn, (c) => renderSsoEdit(c, null));

  app.post(SSO_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "sso:write"));
    if (!session.institution) return needInstitution(c);
    const posted = await formOf(c);
    const form: SsoForm = {
      type: field(posted, "type"),
      state: field(posted, "state"),
      enforced: field(posted, "enforced") === "true",
      domains: field(posted, "domains"),
      source: field(posted, "source") || "fields",
      metadataXml: field(posted, "metadata_xml"),
      metadataUrl: field(posted, "metadata_url"),
      idpEntityId: field(posted, "idp_entity_id"),
      ssoUrl: field(posted, "sso_url"),
      certificates: field(posted, "certificates"),
      issuer: field(posted, "issuer"),
      clientId: field(posted, "client_id"),
      clientSecret: field(posted, "client_secret"),
      scopes: field(posted, "scopes"),
    };
    const origin = new URL(c.req.url).origin;
    const current = await readSso(session.ctx, { institutionId: session.institution.id, origin });
    // The mappings are kept as they are: this form does not edit them (the API does).
    const mapping = {
      saml: mappingInput(current.saml?.attribute_mapping ?? undefined),
      oidc: mappingInput(current.oidc?.claim_mapping ?? undefined),
    };
    const parsed = PutSsoBody.safeParse(ssoInput(form, mapping));
    if (!parsed.success) return renderSsoEdit(c, form, messages(issuesOf(parsed.error.issues)), 422);
    try {
      await putSso(session.ctx, { institutionId: session.institution.id, origin, input: parsed.data });
    } catch (error) {
      const { errors, status } = refusalMessages(error);
      return renderSsoEdit(c, form, errors, status);
    }
    return c.redirect(`${INSTITUTION_SETTINGS_PATH}?notice=sso#sso-heading`, 303);
  });

  app.post(`${SSO_PATH}/domains/:domain/verify`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "sso:write"));
    if (!session.institution) return needInstitution(c);
    try {
      await verifySsoDomain(session.ctx, {
        institutionId: session.institution.id,
        domain: c.req.param("domain").trim().toLowerCase(),
        method: "dns",
      });
    } catch (error) {
      const { errors, status } = refusalMessages(error);
      return renderSettings(c, { ssoErrors: errors, status });
    }
    return c.redirect(`${INSTITUTION_SETTINGS_PATH}?notice=verified#sso-heading`, 303);
  });
}
