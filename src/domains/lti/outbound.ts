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

/** The largest answer read whole (a token endpoint's JSON; JWT access tokens run to a few KiB). */
const JSON_BODY_LIMIT = 64 * 1024;

/**
 * A timed POST whose whole answer is read (up to 64 KiB), for the token endpoint. Failures are
 * outcomes like `postToPlatform`'s; `responseBody` holds the whole answer.
 */
export async function postForJson(
  env: Env,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<AttemptOutcome> {
  const problem = platformUrlProblem(env, url);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string, status: number | null = null, text: string | null = null) => ({
    ok: false,
    responseStatus: status,
    error,
    responseBody: text,
    durationMs: elapsed(),
    retryAfter: null,
  });
  if (problem) return failed(`Refused: the URL ${problem}`);
  const timeoutMs = config(env).webhooks.timeoutMs;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal });
    const text = (await response.text()).slice(0, JSON_BODY_LIMIT);
    if (response.status >= 200 && response.status < 300)
      return {
        ok: true,
        responseStatus: response.status,
        error: null,
        responseBody: text,
        durationMs: elapsed(),
        retryAfter: null,
      };
    return {
      ...failed(`HTTP ${response.status}`, response.status, text.slice(0, RESPONSE_BODY_LIMIT)),
      retryAfter: response.headers.get("Retry-After"),
    };
  } catch (thrown) {
    return failed(signal.aborted ? `Timed out after ${timeoutMs} ms` : `Network error: ${String(thrown)}`);
  }
}

/** A timed GET of a JSON document through the gate (a JWKS, a line item); throws on any failure. */
export async function getJson(
  env: Env,
  url: string,
  accept = "application/json",
  headers: Record<string, string> = {},
): Promise<unknown> {
  assertAllowed(env, url);
  const response = await fetch(url, {
    headers: { ...headers, Accept: accept },
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
