import { and, eq, gt, notExists, sql } from "drizzle-orm";
import { SignJWT } from "jose";
import { ltiAccessTokens, ltiConsumers } from "../../../db/schema";
import { ltiAccessTokenBinding } from "../../../platform/crypto/sealed-values";
import { seal, unseal } from "../../../platform/crypto/sealing";
import type { ServiceContext } from "../../../platform/service/context";
import { type AttemptOutcome, postForJson } from "../outbound";
import type { ConsumerRow } from "../registrations/service";
import { currentSigningKey } from "../registrations/signing-keys";

/** A cached token is dropped this long before the platform says it expires. */
const EXPIRY_MARGIN_MS = 60_000;

export type TokenResult = { token: string } | { failure: AttemptOutcome };

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

export async function forgetAccessToken(
  ctx: ServiceContext,
  consumerId: string,
  scope: string,
): Promise<void> {
  await ctx.db
    .delete(ltiAccessTokens)
    .where(and(eq(ltiAccessTokens.consumerId, consumerId), eq(ltiAccessTokens.scope, scope)))
    .run();
}

/**
 * An access token of the platform for `scope`: the cached one while it has more than a minute left,
 * else a new one by the client-credentials grant with a JWT client assertion. A platform that fails
 * answers the attempt's outcome instead (its status tells a rejection from an outage).
 */
export async function accessToken(
  ctx: ServiceContext,
  consumer: ConsumerRow,
  scope: string,
): Promise<TokenResult> {
  const { db } = ctx;
  const secret = ctx.config.encryptionKey;
  const cached = await db
    .select()
    .from(ltiAccessTokens)
    .where(
      and(
        eq(ltiAccessTokens.consumerId, consumer.id),
        eq(ltiAccessTokens.scope, scope),
        gt(ltiAccessTokens.expiresAt, ctx.now()),
      ),
    )
    .get();
  const binding = ltiAccessTokenBinding(consumer.id, scope);
  if (cached) return { token: await unseal(cached.tokenSealed, secret, binding) };

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
  const lifetimeMs =
    (typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : 3600) * 1000;
  const expiresAt = ctx.now() + Math.max(lifetimeMs - EXPIRY_MARGIN_MS, lifetimeMs / 2);
  const tokenSealed = await seal(body.access_token, secret, binding);
  // Kept only while the registration still names the platform the token was asked from: a change
  // made meanwhile (updateConsumer forgets the cached tokens) must not be undone by this late insert.
  await db.batch([
    db
      .insert(ltiAccessTokens)
      .values({ consumerId: consumer.id, scope, tokenSealed, expiresAt })
      .onConflictDoUpdate({
        target: [ltiAccessTokens.consumerId, ltiAccessTokens.scope],
        set: { tokenSealed, expiresAt },
      }),
    db.delete(ltiAccessTokens).where(
      and(
        eq(ltiAccessTokens.consumerId, consumer.id),
        notExists(
          db
            .select({ id: ltiConsumers.id })
            .from(ltiConsumers)
            .where(
              and(
                eq(ltiConsumers.id, consumer.id),
                eq(ltiConsumers.issuer, consumer.issuer),
                eq(ltiConsumers.clientId, consumer.clientId),
                eq(ltiConsumers.authTokenUrl, consumer.authTokenUrl),
                eq(ltiConsumers.jwksUrl, consumer.jwksUrl),
                sql`${ltiConsumers.authTokenAudience} IS ${consumer.authTokenAudience}`,
              ),
            ),
        ),
      ),
    ),
  ]);
  return { token: body.access_token };
}
