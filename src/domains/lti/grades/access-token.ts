import { SignJWT } from "jose";
import {
  type AccessTokenKey,
  accessToken as cachedOrObtained,
  forgetAccessToken as forgetCached,
  type HeldToken,
} from "../../../platform/outbound/access-tokens";
import type { ServiceContext } from "../../../platform/service/context";
import { type AttemptOutcome, postForJson } from "../outbound";
import { type ConsumerRow, ltiTokenHolder } from "../registrations/service";
import { currentSigningKey } from "../registrations/signing-keys";

/**
 * A platform's OAuth 2 access tokens (AGS scores and line items, NRPS), obtained by LTI's own grant
 * (client credentials with a JWT client assertion) and kept in the platform's token cache
 * (platform/outbound/access-tokens.ts) under holder `lti:<registration id>`, at the registration's
 * `credentials_version`: a change of what the token is obtained with raises it, so no token of the
 * old values is read again.
 */

export type TokenResult = HeldToken | { failure: AttemptOutcome };

/** The cache key of a registration's token for `scope`. */
export function tokenKey(
  consumer: Pick<ConsumerRow, "id" | "credentialsVersion">,
  scope: string,
): AccessTokenKey {
  return { holder: ltiTokenHolder(consumer.id), scope, version: consumer.credentialsVersion };
}

/**
 * The JWT client assertion of RFC 7523, signed with the registration's own current key (kid in the
 * header), which only that registration's JWKS URL publishes: a platform configured with another
 * registration's JWKS URL refuses it.
 */
async function clientAssertion(ctx: ServiceContext, consumer: ConsumerRow): Promise<string> {
  const key = await currentSigningKey(ctx, consumer.id);
  return new SignJWT({})
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: key.kid })
    .setIssuer(consumer.clientId)
    .setSubject(consumer.clientId)
    .setAudience(consumer.authTokenAudience ?? consumer.authTokenUrl)
    .setJti(crypto.randomUUID())
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(key.privateKey);
}

/** The client-credentials grant at the registration's token URL; the platform's failure as the attempt's outcome. */
async function obtain(ctx: ServiceContext, consumer: ConsumerRow, scope: string) {
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    client_assertion: await clientAssertion(ctx, consumer),
    scope,
  });
  const outcome = await postForJson(
    ctx,
    consumer.authTokenUrl,
    { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
    form.toString(),
  );
  if (!outcome.ok) return { failure: { ...outcome, error: `Token endpoint: ${outcome.error}` } };
  let body: { access_token?: unknown; expires_in?: unknown };
  try {
    body = JSON.parse(outcome.responseBody ?? "");
  } catch {
    body = {};
  }
  if (typeof body.access_token !== "string" || !body.access_token)
    return { failure: { ...outcome, ok: false, error: "Token endpoint: the answer has no access_token" } };
  return {
    token: body.access_token,
    expiresInSeconds: typeof body.expires_in === "number" ? body.expires_in : null,
  };
}

/**
 * An access token of the platform for `scope`: the cached one while it has more than a minute left,
 * else a new one by the client-credentials grant with a JWT client assertion. A platform that fails
 * answers the attempt's outcome instead (its status tells a rejection from an outage).
 */
export function accessToken(ctx: ServiceContext, consumer: ConsumerRow, scope: string): Promise<TokenResult> {
  return cachedOrObtained<AttemptOutcome>(ctx, tokenKey(consumer, scope), () => obtain(ctx, consumer, scope));
}

/** Forgets a token the platform refused (401), unless another has replaced it in the cache meanwhile. */
export function forgetAccessToken(
  ctx: ServiceContext,
  consumer: ConsumerRow,
  scope: string,
  held: HeldToken,
): Promise<void> {
  return forgetCached(ctx, tokenKey(consumer, scope), held);
}
