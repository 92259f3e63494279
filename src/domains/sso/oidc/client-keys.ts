import { eq } from "drizzle-orm";
import { SignJWT } from "jose";
import { type OidcSettings, ssoConnections, ssoSigningKeys } from "../../../db/schema";
import { certificatePem } from "../../../platform/crypto/certificates";
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
  // Microsoft Entra ID takes a client's key only as a certificate (a "certificate credential").
  certificate: { commonName: (institutionId) => `Lingua SSO client ${institutionId}` },
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

/**
 * A published key's certificate (PEM), to upload where a provider takes certificates rather than a
 * key set URL (Microsoft Entra ID): the key `kid` names, else the current key of the algorithm the
 * assertions use. No OIDC connection, or no such key published: 404.
 */
export async function institutionClientCertificate(
  ctx: ServiceContext,
  institutionId: string,
  kid?: string,
): Promise<{ kid: string; pem: string }> {
  const oidc = await oidcConnection(ctx, institutionId);
  const alg = assertionAlg(oidc?.token_endpoint_auth_signing_alg_values_supported) ?? "RS256";
  const keys = await institutionClientKeys(ctx, institutionId);
  const key = kid === undefined ? keys.find((k) => k.alg === alg) : keys.find((k) => k.kid === kid);
  const der = key?.x5c?.[0];
  if (!key || !der)
    throw new ApiError(
      "not_found",
      kid === undefined
        ? "The institution has no current client key."
        : `No key ${kid.slice(0, 100)} is published for this institution.`,
    );
  return { kid: key.kid, pem: certificatePem(der) };
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
    // `x5t` (SHA-1) is how Microsoft Entra ID finds the certificate credential; `x5t#S256` its successor.
    .setProtectedHeader({
      alg,
      kid: key.kid,
      typ: "JWT",
      ...(key.x5t ? { x5t: key.x5t, "x5t#S256": key.x5tS256 } : {}),
    })
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
