import {
  checkOutboundUrl,
  type OutboundErrorCode,
  outboundFetch,
  RESPONSE_PREFIX_BYTES,
} from "../../platform/outbound";
import type { ServiceContext } from "../../platform/service/context";

/**
 * Every request LTI makes to a platform (its JWKS, token endpoint, line items) goes through the
 * outbound gate (platform/outbound): the address rules, checked when a URL is saved and again before
 * every request, the timed fetch with failure categories, and the webhooks' retry schedule.
 */

export const RESPONSE_BODY_LIMIT = RESPONSE_PREFIX_BYTES;
/** The largest answer read whole (a token endpoint's JSON, a key set; JWT access tokens run to a few KiB). */
const JSON_BODY_LIMIT = 64 * 1024;

export interface AttemptOutcome {
  ok: boolean;
  responseStatus: number | null;
  errorCode: OutboundErrorCode | null;
  error: string | null;
  responseBody: string | null;
  durationMs: number;
  /** The platform's Retry-After header, raw. */
  retryAfter: string | null;
}

/**
 * Null when the URL may be saved, otherwise why not (a sentence fragment for a 422): the gate's
 * address rules, and unless OUTBOUND_DOH_URL is "off" its resolved addresses too, as for webhook targets. A
 * name that does not resolve yet is accepted, as webhooks accept it; every send checks again.
 */
export async function platformUrlProblem(ctx: ServiceContext, url: string): Promise<string | null> {
  const verdict = await checkOutboundUrl(ctx.env, url);
  return verdict.ok || verdict.code === "dns" ? null : verdict.problem;
}

async function send(
  ctx: ServiceContext,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
  bodyLimit: number,
): Promise<AttemptOutcome> {
  const result = await outboundFetch(ctx.env, url, init, {
    timeoutMs: ctx.config.webhooks.timeoutMs,
    bodyLimit,
    log: { caller: "lti" },
  });
  return {
    ok: result.ok,
    responseStatus: result.status,
    errorCode: result.errorCode,
    error: result.error,
    responseBody: result.bodyPrefix,
    durationMs: result.durationMs,
    retryAfter: result.headers?.get("Retry-After") ?? null,
  };
}

/** A timed POST through the gate (a score); the first KiB of the answer is kept. Never throws for the platform. */
export function postToPlatform(
  ctx: ServiceContext,
  url: string,
  headers: Record<string, string>,
  body: string,
) {
  return send(ctx, url, { method: "POST", headers, body }, RESPONSE_BODY_LIMIT);
}

/** A timed POST whose answer is read whole (up to 64 KiB): the token endpoint. */
export function postForJson(ctx: ServiceContext, url: string, headers: Record<string, string>, body: string) {
  return send(ctx, url, { method: "POST", headers, body }, JSON_BODY_LIMIT);
}

/** A timed GET of a JSON document through the gate (a JWKS, a line item); throws on any failure. */
export async function getJson(
  ctx: ServiceContext,
  url: string,
  accept = "application/json",
  headers: Record<string, string> = {},
): Promise<unknown> {
  const outcome = await send(
    ctx,
    url,
    { method: "GET", headers: { ...headers, Accept: accept } },
    JSON_BODY_LIMIT,
  );
  if (!outcome.ok) throw new Error(`${outcome.error ?? "failed"} (${url})`);
  return JSON.parse(outcome.responseBody ?? "");
}
