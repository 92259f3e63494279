import { toBase64Url, utf8 } from "../../../platform/crypto/encoding";
import type { ServiceContext } from "../../../platform/service/context";
import { redirectUri } from "../../institutions/sso/present";
import type { BeginInput, Begun } from "../protocol";
import { notConfigured } from "../refusal";

/** RFC 7636's S256 challenge of a verifier. */
export async function s256(verifier: string): Promise<string> {
  return toBase64Url(await crypto.subtle.digest("SHA-256", utf8(verifier)));
}

/**
 * An OIDC sign-in's first leg, once the pending request (state, nonce, PKCE verifier) is stored: the
 * authorization request to the discovered `authorization_endpoint` — code flow, S256,
 * `response_mode=query`, our `redirect_uri` as the SSO settings announce it.
 */
export async function beginOidc(_ctx: ServiceContext, input: BeginInput): Promise<Begun> {
  const oidc = input.connection.oidc;
  if (!oidc?.authorization_endpoint || !oidc.client_id) throw notConfigured();
  const { request } = input;
  const url = new URL(oidc.authorization_endpoint);
  const query: Record<string, string> = {
    response_type: "code",
    response_mode: "query",
    client_id: oidc.client_id,
    redirect_uri: redirectUri(input.origin, input.institutionId),
    scope: oidc.scopes.join(" "),
    state: request.state,
    nonce: request.nonce,
    code_challenge: await s256(request.codeVerifier as string),
    code_challenge_method: "S256",
  };
  if (input.loginHint) query.login_hint = input.loginHint;
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return { location: url.toString(), cookie: request.cookie };
}
