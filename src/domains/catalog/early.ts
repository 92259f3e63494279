import type { Env } from "../../env";
import {
  ageSeconds,
  ifNoneMatchHits,
  type MemoryCopy,
  PUBLIC_CACHE_CONTROL,
  recalled,
} from "../../platform/http/edge-cache";
import { DEFAULT_FRAMING_HEADERS, requestIdFor, SECURITY_HEADERS } from "../../platform/http/middleware";
import { clientIpOf } from "../../platform/ratelimit/middleware";
import { PUBLIC_COURSES_PATH } from "../content/public-pages";
import { PUBLIC_CORS_HEADERS } from "./headers";

/**
 * A public catalogue page this isolate answered a moment ago, answered again before the app runs,
 * the way a CDN serves a cached copy in front of its origin: routing, middleware and validation
 * would only reproduce what the first answer already settled for this exact URL. The response
 * carries exactly the headers the app path sends (the same constants), the per-IP limit still
 * applies, and anything else — another method, no copy, a refused limit — goes to the app, which
 * then also answers the 429.
 */
export function cachedPageFor(request: Request): MemoryCopy | null {
  if (request.method !== "GET") return null;
  const url = request.url;
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart < 0 || !url.startsWith(PUBLIC_COURSES_PATH, pathStart)) return null;
  return recalled(url) ?? null;
}

/** Answers `copy` (from `cachedPageFor`) when the caller's address is within its limit; otherwise null. */
export async function answerCachedPageEarly(
  copy: MemoryCopy,
  request: Request,
  env: Env,
): Promise<Response | null> {
  const { success } = await env.PUBLIC_RATE_LIMITER.limit({ key: clientIpOf(request.headers) });
  if (!success) return null;
  copy.early ??= earlyParts(copy);
  const notModified = ifNoneMatchHits(request.headers.get("If-None-Match"), copy.etag);
  // The Response copies the template into its own Headers, which then take the per-request fields.
  const response = notModified
    ? new Response(null, { status: 304, headers: copy.early.notModified })
    : new Response(copy.early.bytes, { status: 200, headers: copy.early.ok });
  response.headers.set("X-Request-Id", requestIdFor(request.headers.get("X-Request-Id")));
  const age = ageSeconds(copy.storedAt);
  if (age > 0) response.headers.set("Age", String(age));
  return response;
}

function earlyParts(copy: MemoryCopy): NonNullable<MemoryCopy["early"]> {
  const fixed: [string, string][] = [
    ...SECURITY_HEADERS,
    ...DEFAULT_FRAMING_HEADERS,
    ...PUBLIC_CORS_HEADERS,
    ["ETag", copy.etag],
    ["Cache-Control", PUBLIC_CACHE_CONTROL],
    ["X-Cache", "HIT"],
    // The D1 bookmark of the read that made the copy, as the app path answers it (edge-cache.ts).
    ...(copy.bookmark ? [["X-D1-Bookmark", copy.bookmark]] : []),
  ] as [string, string][];
  return {
    bytes: new TextEncoder().encode(copy.body),
    ok: new Headers([...fixed, ["Content-Type", "application/json"]]),
    notModified: new Headers(fixed),
  };
}
