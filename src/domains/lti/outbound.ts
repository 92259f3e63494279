import type { Env } from "../../env";
import { config } from "../../platform/config";
import { MAX_RETRIES, parseRetryAfter, retryDelaySeconds } from "../webhooks/retry-policy";
import { type AttemptOutcome, postSigned, RESPONSE_BODY_LIMIT } from "../webhooks/send";
import { targetUrlProblem } from "../webhooks/target-url";

/**
 * Every request LTI makes to a platform (its JWKS, token endpoint, line items) goes through this one
 * module, which uses the shared outbound gate: the address rules of webhook targets (checked when a
 * URL is saved and again before every request), the timed fetch, and the webhooks' retry policy.
 */

export type { AttemptOutcome };
export { MAX_RETRIES, RESPONSE_BODY_LIMIT };

/** Null when the URL may be used, otherwise why not (a sentence fragment). */
export function platformUrlProblem(env: Env, url: string): string | null {
  return targetUrlProblem(url, config(env).allowPrivateTargets);
}

export class OutboundRefused extends Error {}

function assertAllowed(env: Env, url: string): void {
  const problem = platformUrlProblem(env, url);
  if (problem) throw new OutboundRefused(`${url} ${problem}`);
}

/** A timed POST through the gate; never throws for the platform's failures (see AttemptOutcome). */
export async function postToPlatform(
  env: Env,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<AttemptOutcome> {
  const problem = platformUrlProblem(env, url);
  if (problem)
    return {
      ok: false,
      responseStatus: null,
      error: `Refused: the URL ${problem}`,
      responseBody: null,
      durationMs: 0,
      retryAfter: null,
    };
  return postSigned(url, { headers, body: new TextEncoder().encode(body) }, config(env).webhooks.timeoutMs);
}

/** A timed GET of a JSON document through the gate (a JWKS, a line item); throws on any failure. */
export async function getJson(env: Env, url: string, accept = "application/json"): Promise<unknown> {
  assertAllowed(env, url);
  const response = await fetch(url, {
    headers: { Accept: accept },
    redirect: "manual",
    signal: AbortSignal.timeout(config(env).webhooks.timeoutMs),
  });
  if (!response.ok) {
    response.body?.cancel().catch(() => undefined);
    throw new Error(`HTTP ${response.status} from ${url}`);
  }
  return response.json();
}

/** Seconds before retry number `attempt` (1-based) or null when retries are used up (webhooks' policy). */
export function retryInSeconds(env: Env, attempt: number, retryAfter: string | null): number | null {
  return retryDelaySeconds(
    attempt,
    config(env).webhooks.retrySchedule,
    parseRetryAfter(retryAfter, Date.now()),
  );
}
