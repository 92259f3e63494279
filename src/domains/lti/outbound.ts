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

// ——— Platform services: NRPS rosters and AGS line items ———

/** The largest page of a roster or line items list read (NRPS pages run to a few hundred members). */
export const SERVICE_BODY_LIMIT = 2 * 1024 * 1024;

/** An answer of a platform service: the attempt's outcome, and the headers a caller pages by. */
export interface ServiceOutcome extends AttemptOutcome {
  /** The `Link` header, raw (RFC 8288), when the platform sent one. */
  link: string | null;
  /** The `Content-Type` header, raw. */
  contentType: string | null;
}

/**
 * A timed request to a platform service (a roster page, a line items list, a new line item) through
 * the gate; the answer is read up to `SERVICE_BODY_LIMIT`. Never throws for the platform.
 */
export async function requestPlatformService(
  ctx: ServiceContext,
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
): Promise<ServiceOutcome> {
  const result = await outboundFetch(ctx.env, url, init, {
    timeoutMs: ctx.config.webhooks.timeoutMs,
    bodyLimit: SERVICE_BODY_LIMIT,
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
    link: result.headers?.get("Link") ?? null,
    contentType: result.headers?.get("Content-Type") ?? null,
  };
}

/** The target of the `rel="next"` link of an RFC 8288 `Link` header, resolved against `base`; else null. */
export function nextLink(link: string | null, base: string): string | null {
  if (!link) return null;
  for (const part of link.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>\s*(.*)$/.exec(part);
    if (!match) continue;
    const rels = /(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? "");
    const rel = (rels?.[1] ?? rels?.[2] ?? "").toLowerCase().split(/\s+/);
    if (!rel.includes("next")) continue;
    try {
      return new URL(match[1] ?? "", base).toString();
    } catch {
      return null;
    }
  }
  return null;
}
