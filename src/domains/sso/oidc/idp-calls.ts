import type { JSONWebKeySet } from "jose";
import { BoundedMap } from "../../../platform/bounded-map";
import { outboundFetch } from "../../../platform/outbound";
import type { ServiceContext } from "../../../platform/service/context";

/**
 * The OpenID Provider's endpoints a sign-in calls — its key set and its token endpoint — through the
 * outbound gate (address rules checked again before each request, no redirects, one time-out). The
 * key set is cached per `jwks_uri` in the isolate for ten minutes and fetched again, at most every
 * ten seconds, when an ID token names a key it lacks (the provider rotated).
 */

const TIMEOUT_MS = 5_000;
const BODY_LIMIT = 64 * 1024;
const JWKS_TTL_MS = 10 * 60_000;
const REFETCH_MIN_INTERVAL_MS = 10_000;

export class IdpUnavailable extends Error {}

interface CachedKeys {
  jwks: JSONWebKeySet;
  fetchedAt: number;
  missRefetchAt: number;
}
const keySets = new BoundedMap<string, CachedKeys>(500);

async function fetchKeys(ctx: ServiceContext, jwksUri: string, missRefetchAt: number): Promise<CachedKeys> {
  const result = await outboundFetch(
    ctx.env,
    jwksUri,
    {
      method: "GET",
      headers: { Accept: "application/jwk-set+json, application/json", "User-Agent": "Lingua-SSO/1" },
    },
    { timeoutMs: TIMEOUT_MS, bodyLimit: BODY_LIMIT, log: { caller: "sso", call: "jwks" } },
  );
  if (!result.ok || result.bodyPrefix === null)
    throw new IdpUnavailable(
      `The identity provider's key set (${jwksUri}) ${result.error ?? `answered HTTP ${result.status}`}.`,
    );
  let keys: unknown;
  try {
    keys = (JSON.parse(result.bodyPrefix) as { keys?: unknown }).keys;
  } catch {
    keys = undefined;
  }
  if (!Array.isArray(keys))
    throw new IdpUnavailable(`The identity provider's key set (${jwksUri}) has no \`keys\` array.`);
  const fresh = { jwks: { keys } as JSONWebKeySet, fetchedAt: ctx.now(), missRefetchAt };
  keySets.set(jwksUri, fresh);
  return fresh;
}

/** The key set to verify a token whose header names `kid` (or none) with. */
export async function providerKeys(
  ctx: ServiceContext,
  jwksUri: string,
  kid: string | undefined,
): Promise<JSONWebKeySet> {
  const now = ctx.now();
  let entry = keySets.get(jwksUri);
  if (!entry || now - entry.fetchedAt > JWKS_TTL_MS) entry = await fetchKeys(ctx, jwksUri, 0);
  else if (
    kid !== undefined &&
    !entry.jwks.keys.some((k) => k.kid === kid) &&
    now - entry.missRefetchAt >= REFETCH_MIN_INTERVAL_MS
  )
    entry = await fetchKeys(ctx, jwksUri, now);
  return entry.jwks;
}

export type TokenAnswer =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; upstream: boolean; message: string };

/** POSTs the token request; a 4xx is the provider refusing the code, anything else without a 200 is it failing. */
export async function postTokenRequest(
  ctx: ServiceContext,
  tokenEndpoint: string,
  form: Record<string, string>,
  headers: Record<string, string>,
): Promise<TokenAnswer> {
  const result = await outboundFetch(
    ctx.env,
    tokenEndpoint,
    {
      method: "POST",
      headers: {
        ...headers,
        "Content-Type": "application/x-www-form-urlencoded",
        Accept: "application/json",
        "User-Agent": "Lingua-SSO/1",
      },
      body: new URLSearchParams(form).toString(),
    },
    { timeoutMs: TIMEOUT_MS, bodyLimit: BODY_LIMIT, log: { caller: "sso", call: "token" } },
  );
  let body: Record<string, unknown> | null = null;
  try {
    const parsed = JSON.parse(result.bodyPrefix ?? "");
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed;
  } catch {
    body = null;
  }
  if (result.status === 200 && body) return { ok: true, body };
  if (result.status !== null && result.status >= 400 && result.status < 500) {
    const error = typeof body?.error === "string" ? body.error : `HTTP ${result.status}`;
    const description =
      typeof body?.error_description === "string" ? `: ${body.error_description.slice(0, 300)}` : "";
    return {
      ok: false,
      upstream: false,
      message: `The identity provider's token endpoint refused the code (${error}${description}).`,
    };
  }
  return {
    ok: false,
    upstream: true,
    message: `The identity provider's token endpoint ${result.status === null ? `could not be reached (${result.error})` : `answered HTTP ${result.status}`}.`,
  };
}
