import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { BoundedMap } from "../bounded-map";
import { clientIp, limiterFor, rateLimitedError } from "./middleware";
import { IP_POLICIES, windowSecondsFrom } from "./policies";

const { name, limit } = IP_POLICIES.authFailures;
const WHAT = "requests with a refused token from this address";

/**
 * Addresses this isolate has seen go over the limit, until their window frees them. A token the
 * isolate has not seen costs a hash, a Durable Object and a D1 read before it can be refused; from
 * an address in here it is refused at once. Tokens the isolate already knows are not affected, so an
 * office behind one address keeps working while someone there guesses.
 */
const refusedUntil = new BoundedMap<string, { until: number; error: ReturnType<typeof rateLimitedError> }>(10_000);

/** Throws the 429 when this isolate has seen the caller's address go over its limit of refused tokens. */
export function refuseIfOverAuthFailureLimit(c: Context<AppEnv>): void {
  const ip = clientIp(c);
  const refusal = refusedUntil.get(ip);
  if (!refusal) return;
  if (refusal.until > Date.now()) throw refusal.error;
  refusedUntil.delete(ip);
}

/**
 * Counts a refused token against the caller's address (one exact counter per address, shared by
 * every isolate) and throws the 429 once the address is over the limit; otherwise the caller sends
 * its 401.
 */
export async function countAuthFailure(c: Context<AppEnv>): Promise<void> {
  const ip = clientIp(c);
  const decision = await limiterFor(c.env, `ip:${name}:${ip}`).consume(limit, windowSecondsFrom(c.env));
  if (decision.allowed) return;
  const error = rateLimitedError(decision, WHAT);
  refusedUntil.set(ip, { until: Date.now() + decision.retryAfterSeconds * 1000, error });
  throw error;
}
