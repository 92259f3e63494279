import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { toHex } from "../crypto/encoding";
import { ApiError } from "../errors";

declare module "hono" {
  interface ContextVariableMap {
    /** This request's id (`X-Request-Id`): set by `responseHeaders` (below) on every request. */
    requestId: string;
  }
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

// Request ids: 20 random hex digits per isolate, then a 12-digit counter — unique without a
// random draw per request (this middleware wraps every request, /healthz included). The prefix is
// drawn at the first request: Workers refuse random values at global scope.
let isolatePrefix = "";
let requestCounter = 0;
function newRequestId(): string {
  isolatePrefix ||= toHex(crypto.getRandomValues(new Uint8Array(10)));
  requestCounter += 1;
  return `req_${isolatePrefix}${requestCounter.toString(16).padStart(12, "0")}`;
}
/** A well-formed id sent by the client is kept for tracing; otherwise a new one. */
export function requestIdFor(incoming: string | null | undefined): string {
  return incoming && CLIENT_REQUEST_ID.test(incoming) ? incoming : newRequestId();
}

/**
 * Security headers of every response. The framing pair below is the default: a route that sets its
 * own Content-Security-Policy decides framing with its `frame-ancestors` (the docs page: none; the LTI
 * pages, which a learning platform embeds: any) and gets no X-Frame-Options beside it.
 */
export const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ["X-Content-Type-Options", "nosniff"],
  ["Referrer-Policy", "no-referrer"],
  ["Strict-Transport-Security", "max-age=31536000; includeSubDomains"],
];
export const DEFAULT_FRAMING_HEADERS: readonly (readonly [string, string])[] = [
  ["Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"],
  ["X-Frame-Options", "DENY"],
];

/**
 * Headers every response carries: `X-Request-Id` and the security headers. One middleware, because
 * it wraps every request, /healthz too. (`answerCachedPageEarly` sends the same for the public
 * catalogue's memory hits, which it answers before the app.)
 */
export const responseHeaders = createMiddleware<AppEnv>(async function responseHeaders(c, next) {
  const id = requestIdFor(c.req.raw.headers.get("X-Request-Id"));
  c.set("requestId", id);
  await next();
  const headers = c.res.headers;
  headers.set("X-Request-Id", id);
  for (const [name, value] of SECURITY_HEADERS) headers.set(name, value);
  if (!headers.has("Content-Security-Policy"))
    for (const [name, value] of DEFAULT_FRAMING_HEADERS) headers.set(name, value);
});

export const MAX_BODY_BYTES = 1024 * 1024;

/** Operations that take a larger body than the rest: the bulk member upload (a CSV file of up to 5 MiB). */
export const LARGER_BODY_LIMITS: readonly { path: RegExp; maxSize: number }[] = [
  { path: /^\/api\/institutions\/[^/]+\/members\/bulk$/, maxSize: 5 * 1024 * 1024 },
];

function bodyLimitOf(maxSize: number) {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError("payload_too_large", `The request body exceeds ${maxSize} bytes.`);
    },
  });
}

export function limitBody(maxSize = MAX_BODY_BYTES) {
  const standard = bodyLimitOf(maxSize);
  const larger = LARGER_BODY_LIMITS.map(({ path, maxSize }) => ({ path, limit: bodyLimitOf(maxSize) }));
  return createMiddleware<AppEnv>(function limitBody(c, next) {
    const special = larger.find(({ path }) => path.test(c.req.path));
    return (special?.limit ?? standard)(c, next);
  });
}
