import type { Env } from "../../../env";
import { validationError } from "../../../platform/errors";
import { fetchDocument } from "./fetch-metadata";

export interface Discovery {
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  jwks_uri: string | null;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" && value ? value : null;
}

/**
 * Fetches the issuer's OpenID Provider configuration (OpenID Connect Discovery 1.0, section 4) and
 * checks that it names exactly this issuer, as section 4.3 requires of a client.
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
  return {
    authorization_endpoint: stringOrNull(document.authorization_endpoint),
    token_endpoint: stringOrNull(document.token_endpoint),
    jwks_uri: stringOrNull(document.jwks_uri),
  };
}
