import { eq } from "drizzle-orm";
import { SignJWT } from "jose";
import { type OidcSettings, ssoConnections, ssoSigningKeys } from "../../../db/schema";
import { ssoPrivateKeyBinding } from "../../../platform/crypto/sealed-values";
import { type PublishedJwk, signingKeyStore } from "../../../platform/crypto/signing-keys";
import { ApiError } from "../../../platform/errors";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { institutionInScope } from "../../institutions/access";
import { assertionAlg } from "../../institutions/sso/oidc";

/**
 * `private_key_jwt` (OpenID Connect Core 9, RFC 7523): an institution's OIDC connection may
 * authenticate at the token endpoint with a client assertion signed by the institution's own key
 * instead of a client secret. The keys are kept by the platform's signing-key store (the one LTI uses):
 * sealed private halves, thumbprint `kid`s, one current key per algorithm, rotation with the old key
 * published 7 days more, and a public JWKS per institution (`oidc.jwks_uri` in the SSO settings).
 */

const store = signingKeyStore({
  table: ssoSigningKeys,
  owner: ssoSigningKeys.institutionId,
  ownerKey: "institutionId",
  binding: ssoPrivateKeyBinding,
  name: "SSO",
});

/** A client assertion is valid this long (RFC 7523 3: "exp" short; the provider checks it at once). */
const ASSERTION_LIFETIME_SECONDS = 60;

async function oidcConnection(ctx: ServiceContext, institutionId: string) {
  const row = await ctx.db
    .select({ type: ssoConnections.type, oidc: ssoConnections.oidc })
    .from(ssoConnections)
    .where(eq(ssoConnections.institutionId, institutionId))
    .get();
  if (row?.type !== "oidc") throw new ApiError("not_found", "No OIDC connection for this institution.");
  return row.oidc;
}

/** The institution's public keys (no token: the provider fetches them). No OIDC connection: 404. */
export async function institutionClientKeys(
  ctx: ServiceContext,
  institutionId: string,
): Promise<PublishedJwk[]> {
  const oidc = await oidcConnection(ctx, institutionId);
  // The key of the algorithm the provider takes is listed before the first sign-in needs it.
  const alg = assertionAlg(oidc?.token_endpoint_auth_signing_alg_values_supported);
  if (alg && alg !== "RS256") await store.ensureCurrentKey(ctx, institutionId, alg);
  return store.publishedKeys(ctx, institutionId);
}

/** Makes new current keys; the previous ones stay published for 7 days. */
export async function rotateClientKeys(ctx: PrincipalContext, institutionId: string) {
  await institutionInScope(ctx, institutionId);
  await oidcConnection(ctx, institutionId);
  const { current, retired } = await store.rotate(ctx, institutionId);
  return { current, retired, keys: await store.publishedKeys(ctx, institutionId) };
}

/** The token request's client authentication with a fresh assertion (RFC 7523 2.2 and 3). */
export async function clientAssertionForm(
  ctx: ServiceContext,
  institutionId: string,
  oidc: OidcSettings & { client_id: string; token_endpoint: string },
): Promise<Record<string, string>> {
  const alg = assertionAlg(oidc.token_endpoint_auth_signing_alg_values_supported) ?? "RS256";
  const key = await store.currentSigningKey(ctx, institutionId, alg);
  const now = Math.floor(ctx.now() / 1000);
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg, kid: key.kid, typ: "JWT" })
    .setIssuer(oidc.client_id)
    .setSubject(oidc.client_id)
    .setAudience(oidc.token_endpoint)
    .setJti(crypto.randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + ASSERTION_LIFETIME_SECONDS)
    .sign(key.privateKey);
  return {
    client_id: oidc.client_id,
    client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    client_assertion: assertion,
  };
}
