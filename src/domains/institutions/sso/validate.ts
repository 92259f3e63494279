import type { OidcSettings, SamlSettings } from "../../../db/schema";
import type { Env } from "../../../env";
import { type FieldError, validationError } from "../../../platform/errors";
import type { ServiceContext } from "../../../platform/service/context";
import { parseCertificate } from "./certificates";
import { fetchDocument, outboundUrlProblem } from "./fetch-metadata";
import { DEFAULT_ATTRIBUTE_MAPPING, DEFAULT_CLAIM_MAPPING, storedMapping } from "./mapping-schemas";
import { parseIdpMetadata } from "./metadata";
import { assertionAlg, type Discovery, discover } from "./oidc";
import { DEFAULT_SCOPES, type PutSsoInput } from "./schemas";

type SamlInput = NonNullable<PutSsoInput["saml"]>;
type OidcInput = NonNullable<PutSsoInput["oidc"]>;

function urlError(env: Env, path: string, value: string | null | undefined): FieldError[] {
  if (!value) return [];
  const problem = outboundUrlProblem(env, value);
  return problem ? [{ path, message: problem }] : [];
}

/** The IdP metadata given inline or by URL, to fill the fields the request leaves out. */
async function metadataOf(env: Env, input: SamlInput) {
  if (input.metadata_xml !== undefined) {
    const parsed = await parseIdpMetadata(input.metadata_xml);
    if (!parsed)
      throw validationError([
        { path: "saml.metadata_xml", message: "is not SAML 2.0 metadata with an IDPSSODescriptor" },
      ]);
    return parsed;
  }
  if (input.metadata_url) {
    const xml = await fetchDocument(
      env,
      input.metadata_url,
      "saml.metadata_url",
      "application/samlmetadata+xml, application/xml, text/xml",
    );
    const parsed = await parseIdpMetadata(xml);
    if (!parsed)
      throw validationError([
        { path: "saml.metadata_url", message: "does not serve SAML 2.0 metadata with an IDPSSODescriptor" },
      ]);
    return parsed;
  }
  return null;
}

/** SAML settings as stored: metadata fills what the request leaves out; every value checked (certificates as of now). */
export async function validSaml(ctx: ServiceContext, input: SamlInput): Promise<SamlSettings> {
  const { env } = ctx;
  const nowMs = ctx.now();
  const early = urlError(env, "saml.metadata_url", input.metadata_url);
  if (early.length > 0) throw validationError(early);
  const metadata = await metadataOf(env, input);
  const fromMetadata = input.metadata_xml !== undefined ? "saml.metadata_xml" : "saml.metadata_url";
  const certificates = input.certificates ?? metadata?.certificates ?? [];
  const certificatesPath = input.certificates ? "saml.certificates" : fromMetadata;
  const settings: SamlSettings = {
    idp_entity_id: input.idp_entity_id ?? metadata?.idp_entity_id ?? null,
    sso_url: input.sso_url ?? metadata?.sso_url ?? null,
    certificates: [],
    metadata_url: input.metadata_url ?? null,
    attribute_mapping: storedMapping(input.attribute_mapping, DEFAULT_ATTRIBUTE_MAPPING),
    idp_initiated: input.idp_initiated,
  };
  const errors = urlError(env, input.sso_url ? "saml.sso_url" : fromMetadata, settings.sso_url).map((e) =>
    e.path === "saml.sso_url" ? e : { ...e, message: `names a single sign-on URL that ${e.message}` },
  );
  const parsed = await Promise.all(certificates.map((pem) => parseCertificate(pem, nowMs)));
  parsed.forEach((result, index) => {
    if (result.ok) settings.certificates.push(result.info.pem);
    else
      errors.push({
        path: input.certificates ? `${certificatesPath}.${index}` : certificatesPath,
        message: input.certificates ? result.message : `holds a certificate that ${result.message}`,
      });
  });
  if (errors.length > 0) throw validationError(errors);
  return settings;
}

/** OIDC settings as stored; a given issuer is checked against its discovery document now. */
export async function validOidc(ctx: ServiceContext, input: OidcInput): Promise<OidcSettings> {
  const { env } = ctx;
  const errors = urlError(env, "oidc.issuer", input.issuer);
  const scopes = input.scopes ?? DEFAULT_SCOPES;
  if (!scopes.includes("openid")) errors.push({ path: "oidc.scopes", message: 'must include "openid"' });
  if (errors.length > 0) throw validationError(errors);
  const discovery: Discovery = input.issuer
    ? await discover(env, input.issuer)
    : { authorization_endpoint: null, token_endpoint: null, jwks_uri: null };
  const method = input.token_endpoint_auth_method ?? null;
  if (method && input.issuer) {
    // OpenID Connect Discovery 3: a document without the list offers client_secret_basic only.
    const offered = discovery.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
    const path = "oidc.token_endpoint_auth_method";
    if (!offered.includes(method))
      errors.push({
        path,
        message: `is not offered by the provider: its discovery document's token_endpoint_auth_methods_supported is ${JSON.stringify(offered)}`,
      });
    else if (
      method === "private_key_jwt" &&
      assertionAlg(discovery.token_endpoint_auth_signing_alg_values_supported) === null
    )
      errors.push({
        path,
        message: `needs RS256 or ES256 among the discovery document's token_endpoint_auth_signing_alg_values_supported (${JSON.stringify(discovery.token_endpoint_auth_signing_alg_values_supported)})`,
      });
    if (errors.length > 0) throw validationError(errors);
  }
  return {
    token_endpoint_auth_method: method,
    issuer: input.issuer ?? null,
    client_id: input.client_id ?? null,
    scopes: [...new Set(scopes)],
    claim_mapping: storedMapping(input.claim_mapping, DEFAULT_CLAIM_MAPPING),
    ...discovery,
  };
}

/** What `state: "active"` (and `enforced`) need: a complete configuration. */
export function completenessErrors(
  input: PutSsoInput,
  saml: SamlSettings | null,
  oidc: OidcSettings | null,
  clientSecretSet: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  if (input.enforced && input.state !== "active")
    errors.push({ path: "enforced", message: 'needs state "active"' });
  if (input.state !== "active") return errors;
  const missing = (path: string) => errors.push({ path, message: 'is required with state "active"' });
  if (input.domains.length === 0) missing("domains");
  if (saml) {
    if (!saml.idp_entity_id) missing("saml.idp_entity_id");
    if (!saml.sso_url) missing("saml.sso_url");
    if (saml.certificates.length === 0) missing("saml.certificates");
  }
  if (oidc) {
    if (!oidc.issuer) missing("oidc.issuer");
    if (!oidc.client_id) missing("oidc.client_id");
    if (!clientSecretSet && oidc.token_endpoint_auth_method !== "private_key_jwt")
      missing("oidc.client_secret");
  }
  return errors;
}
