import type { SsoMapping, ssoConnections, ssoDomains } from "../../../db/schema";
import { certificateInfo } from "./certificates";
import { effectiveAuthMethod } from "./oidc";

type Connection = typeof ssoConnections.$inferSelect;
type DomainRow = typeof ssoDomains.$inferSelect;

/** The TXT record's text that proves an institution controls a domain; published at the domain itself. */
export const TXT_PREFIX = "lingua-domain-verification=";

export function presentDomainVerification(row: DomainRow) {
  return {
    domain: row.domain,
    status: row.status,
    method: row.method,
    txt_name: row.domain,
    txt_value: `${TXT_PREFIX}${row.token}`,
    verified_at: row.verifiedAt,
  };
}

/** A mapping as answered: every key, null where it is not mapped. */
function presentMapping(mapping: SsoMapping): SsoMapping {
  return {
    email: mapping.email,
    name: mapping.name ?? null,
    role: mapping.role ?? null,
    groups: mapping.groups ?? null,
  };
}

/** Our side of the connection, for the IdP's administrator; the sign-in endpoints come with SSO sign-in. */
export function serviceProvider(origin: string, institutionId: string) {
  const id = encodeURIComponent(institutionId);
  return {
    entity_id: `${origin}/api/institutions/${id}/sso/saml/metadata`,
    acs_url: `${origin}/api/auth/sso/saml/${id}/acs`,
    metadata_url: `${origin}/api/institutions/${id}/sso/saml/metadata`,
  };
}

export function redirectUri(origin: string, institutionId: string): string {
  return `${origin}/api/auth/sso/oidc/${encodeURIComponent(institutionId)}/callback`;
}

/** The institution's public keys for `private_key_jwt` (src/domains/sso/oidc/client-keys.ts). */
export function oidcJwksUri(origin: string, institutionId: string): string {
  return `${origin}/api/institutions/${encodeURIComponent(institutionId)}/sso/oidc/jwks`;
}

export async function presentSso(
  institutionId: string,
  connection: Connection | null,
  domains: DomainRow[],
  origin: string,
  nowMs: number,
) {
  if (!connection)
    return {
      institution_id: institutionId,
      type: null,
      state: "inactive" as const,
      enforced: false,
      domains: [],
      domain_verifications: [],
      saml: null,
      oidc: null,
      break_glass_admin_id: null,
      idp_may_grant_admin: false,
      updated_at: null,
    };
  const { saml, oidc } = connection;
  return {
    institution_id: institutionId,
    type: connection.type,
    state: connection.state,
    enforced: connection.enforced,
    domains: domains.map((row) => row.domain),
    domain_verifications: domains.map(presentDomainVerification),
    saml:
      connection.type === "saml" && saml
        ? {
            idp_entity_id: saml.idp_entity_id,
            sso_url: saml.sso_url,
            certificates: await Promise.all(saml.certificates.map((pem) => certificateInfo(pem, nowMs))),
            metadata_url: saml.metadata_url,
            attribute_mapping: presentMapping(saml.attribute_mapping),
            idp_initiated: saml.idp_initiated ?? false,
            sp: serviceProvider(origin, institutionId),
          }
        : null,
    oidc:
      connection.type === "oidc" && oidc
        ? {
            issuer: oidc.issuer,
            client_id: oidc.client_id,
            client_secret_set: connection.clientSecretSealed !== null,
            scopes: oidc.scopes,
            claim_mapping: presentMapping(oidc.claim_mapping),
            token_endpoint_auth_method: effectiveAuthMethod(oidc),
            redirect_uri: redirectUri(origin, institutionId),
            jwks_uri: oidcJwksUri(origin, institutionId),
          }
        : null,
    break_glass_admin_id: connection.breakGlassUserId,
    idp_may_grant_admin: connection.mappingMayGrantAdmin,
    updated_at: connection.updatedAt,
  };
}
