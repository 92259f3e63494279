import type { Context, Hono } from "hono";
import { SSO_STATES, type SsoMapping } from "../../../db/schema";
import { verifySsoDomain } from "../../../domains/institutions/sso/domain-verification";
import { PutSsoBody } from "../../../domains/institutions/sso/schemas";
import { putSso, readSso } from "../../../domains/institutions/sso/service";
import type { AppEnv } from "../../../env";
import { enforce, holdsAbility } from "../../../platform/auth/policy";
import { field, formOf, issuesOf } from "../../forms";
import { CsrfField, ErrorSummary } from "../../layout";
import { INSTITUTION_SETTINGS_PATH } from "../../prefixes";
import { checkCsrf, type DashboardSession, signedIn } from "../../session";
import { LABELS, messages, needInstitution, page, refusalMessages, SSO_PATH } from "./common";
import { renderSettings } from "./general";
import { type Sso, STATE_LABELS } from "./sso-summary";

/** The SSO settings' edit page: SAML or OIDC, the domains, the state and enforcement. */

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

/** The SSO edit (`PUT …/sso`) and a domain's verification (`POST …/sso/domains/{domain}/verify`). */
export function registerSsoSettings(app: Hono<AppEnv>) {
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
