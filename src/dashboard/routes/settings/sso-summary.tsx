import type { SSO_STATES } from "../../../db/schema";
import type { readSso } from "../../../domains/institutions/sso/service";
import { holdsAbility } from "../../../platform/auth/policy";
import { CsrfField, When } from "../../layout";
import type { DashboardSession } from "../../session";
import { SSO_PATH } from "./common";

/** The settings page's SSO card: the state, the values to give the IdP, the domains and their DNS records. */
export const STATE_LABELS: Record<(typeof SSO_STATES)[number], string> = {
  draft: "Draft (being set up)",
  active: "Active",
  inactive: "Inactive",
};

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

export type Sso = Awaited<ReturnType<typeof readSso>>;

export function SsoSummary({ sso, session }: { sso: Sso; session: DashboardSession }) {
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
