import type { JSONWebKeySet } from "jose";
import { BoundedMap } from "../../../platform/bounded-map";
import type { ServiceContext } from "../../../platform/service/context";
import { getJson } from "../outbound";

/** How long an isolate trusts a platform's key set before fetching it again. */
const JWKS_TTL_MS = 10 * 60_000;
/** An unknown `kid` refetches at most this often per registration, so forged tokens cannot make us hammer the platform. */
const REFETCH_MIN_INTERVAL_MS = 10_000;

interface Cached {
  jwksUrl: string;
  jwks: JSONWebKeySet;
  fetchedAt: number;
  /** When an unknown kid last made us fetch again. */
  missRefetchAt: number;
}

const cache = new BoundedMap<string, Cached>(500);

export class JwksUnavailable extends Error {}

async function fetchJwks(
  ctx: ServiceContext,
  consumerId: string,
  jwksUrl: string,
  missRefetchAt = 0,
): Promise<Cached> {
  let body: unknown;
  try {
    body = await getJson(ctx, jwksUrl, "application/jwk-set+json, application/json");
  } catch (error) {
    throw new JwksUnavailable(`The platform's key set could not be fetched (${String(error)}).`);
  }
  const keys = (body as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new JwksUnavailable("The platform's key set has no `keys` array.");
  const fresh = { jwksUrl, jwks: { keys } as JSONWebKeySet, fetchedAt: ctx.now(), missRefetchAt };
  cache.set(consumerId, fresh);
  return fresh;
}

function hasKid(jwks: JSONWebKeySet, kid: string): boolean {
  return jwks.keys.some((key) => key.kid === kid);
}

/**
 * The registration's key set holding `kid`: from this isolate's cache, fetched through the outbound
 * gate when absent or stale, and fetched once more when the cached set lacks the kid (the platform
 * rotated). Null when even a fresh set does not have it.
 */
export async function platformKeysFor(
  ctx: ServiceContext,
  input: { consumer: { id: string; jwksUrl: string }; kid: string },
): Promise<JSONWebKeySet | null> {
  const { consumer, kid } = input;
  const now = ctx.now();
  let entry = cache.get(consumer.id);
  if (!entry || entry.jwksUrl !== consumer.jwksUrl || now - entry.fetchedAt > JWKS_TTL_MS) {
    entry = await fetchJwks(ctx, consumer.id, consumer.jwksUrl);
  } else if (!hasKid(entry.jwks, kid)) {
    if (now - entry.missRefetchAt < REFETCH_MIN_INTERVAL_MS) return null;
    entry = await fetchJwks(ctx, consumer.id, consumer.jwksUrl, now);
  }
  return hasKid(entry.jwks, kid) ? entry.jwks : null;
}
