import type { Env } from "../../../env";
import { type FieldError, validationError } from "../../../platform/errors";
import { checkOutboundUrl } from "../../../platform/outbound";
import { fetchDocument } from "./fetch-metadata";

export interface Discovery {
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  jwks_uri: string | null;
  /** Kept for sign-in: the algorithms ID tokens may be signed with, and how to authenticate at the token endpoint. */
  id_token_signing_alg_values_supported?: string[] | null;
  token_endpoint_auth_methods_supported?: string[] | null;
  token_endpoint_auth_signing_alg_values_supported?: string[] | null;
}

/** How Lingua may authenticate at the token endpoint. */
export const TOKEN_ENDPOINT_AUTH_METHODS = [
  "client_secret_basic",
  "client_secret_post",
  "private_key_jwt",
] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

/**
 * The algorithm Lingua signs `private_key_jwt` assertions with at a provider: RS256 unless its
 * discovery document lists `token_endpoint_auth_signing_alg_values_supported` without RS256 and with
 * ES256; null when it lists neither (the settings refuse `private_key_jwt` then).
 */
export function assertionAlg(algs: string[] | null | undefined): "RS256" | "ES256" | null {
  if (!algs || algs.length === 0 || algs.includes("RS256")) return "RS256";
  return algs.includes("ES256") ? "ES256" : null;
}

/**
 * The method a connection authenticates with: the one chosen, or else what the discovery document
 * allows of the secret methods, `client_secret_basic` first (the default of OpenID Connect Discovery).
 */
export function effectiveAuthMethod(oidc: {
  token_endpoint_auth_method?: TokenEndpointAuthMethod | null;
  token_endpoint_auth_methods_supported?: string[] | null;
}): TokenEndpointAuthMethod {
  if (oidc.token_endpoint_auth_method) return oidc.token_endpoint_auth_method;
  const methods = oidc.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  return !methods.includes("client_secret_basic") && methods.includes("client_secret_post")
    ? "client_secret_post"
    : "client_secret_basic";
}

function stringsOrNull(value: unknown): string[] | null {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string").slice(0, 50) : null;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" && value ? value : null;
}

/** The endpoints kept from the discovery document: called at sign-in or sent to browsers. */
const ENDPOINTS = ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const;

/**
 * Each endpoint the document names must pass the outbound gate, as the issuer did: the text (https,
 * no credentials or fragment, no internal address) and what its host name resolves to. A name that
 * does not resolve is refused too: the provider is live (we just read its document).
 */
async function endpointErrors(env: Env, discovery: Discovery): Promise<FieldError[]> {
  const verdicts = await Promise.all(
    ENDPOINTS.map(async (field) => {
      const value = discovery[field];
      if (value === null) return null;
      const verdict = await checkOutboundUrl(env, value);
      if (verdict.ok) return null;
      const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value;
      return {
        path: "oidc.issuer",
        message: `the discovery document's ${field} ${verdict.problem} (${JSON.stringify(shown)})`,
      };
    }),
  );
  return verdicts.filter((error) => error !== null);
}

/**
 * Fetches the issuer's OpenID Provider configuration (OpenID Connect Discovery 1.0, section 4),
 * checks that it names exactly this issuer, as section 4.3 requires of a client, and that every
 * endpoint kept from it passes the outbound gate (422 on `oidc.issuer`, naming the document's field).
 */
export async function discover(env: Env, issuer: string): Promise<Discovery> {
  const url = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
  const text = await fetchDocument(env, url, "oidc.issuer", "application/json");
  const fail = (message: string) => validationError([{ path: "oidc.issuer", message }]);
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(text);
  } catch {
    throw fail(`${url} is not a JSON discovery document`);
  }
  if (!document || typeof document !== "object" || Array.isArray(document))
    throw fail(`${url} is not a JSON discovery document`);
  if (document.issuer !== issuer)
    throw fail(
      `the discovery document at ${url} names the issuer ${JSON.stringify(document.issuer ?? null)}, not ${JSON.stringify(issuer)}`,
    );
  const discovery = {
    authorization_endpoint: stringOrNull(document.authorization_endpoint),
    token_endpoint: stringOrNull(document.token_endpoint),
    jwks_uri: stringOrNull(document.jwks_uri),
    id_token_signing_alg_values_supported: stringsOrNull(document.id_token_signing_alg_values_supported),
    token_endpoint_auth_methods_supported: stringsOrNull(document.token_endpoint_auth_methods_supported),
    token_endpoint_auth_signing_alg_values_supported: stringsOrNull(
      document.token_endpoint_auth_signing_alg_values_supported,
    ),
  };
  const errors = await endpointErrors(env, discovery);
  if (errors.length > 0) throw validationError(errors);
  return discovery;
}
