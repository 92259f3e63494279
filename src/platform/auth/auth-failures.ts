import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { BoundedMap } from "../bounded-map";
import { clientIp, consumeByIp, rateLimitedError } from "../ratelimit/middleware";
import { IP_POLICIES } from "../ratelimit/policies";
import type { RateDecision } from "../ratelimit/window";
import { clockNow } from "../service/clock";

const WHAT = "requests with an unknown token from this address";

/**
 * Addresses this isolate has seen go over the limit, until their window frees them. A token the
 * isolate has not seen costs a hash, a Durable Object and a D1 read before it can be refused; from
 * an address in here it is refused at once. Tokens the isolate already knows are not affected, so an
 * office behind one address keeps working while someone there guesses.
 */
const refused = new BoundedMap<string, { at: number; decision: RateDecision }>(10_000);

/** Throws the 429 when this isolate has seen the caller's address go over its limit of unknown tokens. */
export function refuseIfOverAuthFailureLimit(c: Context<AppEnv>): void {
  const ip = clientIp(c);
  const refusal = refused.get(ip);
  if (!refusal) return;
  const elapsed = Math.floor((clockNow() - refusal.at) / 1000);
  const retryAfterSeconds = refusal.decision.retryAfterSeconds - elapsed;
  if (retryAfterSeconds <= 0) {
    refused.delete(ip);
    return;
  }
  // The counts of the refusal, with the waits shortened by the time gone since.
  const resetSeconds = Math.max(retryAfterSeconds, refusal.decision.resetSeconds - elapsed);
  throw rateLimitedError({ ...refusal.decision, retryAfterSeconds, resetSeconds }, WHAT);
}

/**
 * Counts an unknown token against the caller's address (one exact counter per address, shared by
 * every isolate) and throws the 429 once the address is over the limit; otherwise the caller sends
 * its 401.
 */
export async function countAuthFailure(c: Context<AppEnv>): Promise<void> {
  const decision = await consumeByIp(c, IP_POLICIES.authFailures);
  if (decision.allowed) return;
  refused.set(clientIp(c), { at: clockNow(), decision });
  throw rateLimitedError(decision, WHAT);
}
