import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { toHex } from "../crypto/encoding";
import { ApiError } from "../errors";

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
const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Headers every response carries: `X-Request-Id` (a well-formed id sent by the client is kept for
 * tracing) and the security headers. One middleware, because it wraps every request, /healthz too.
 */
export const responseHeaders = createMiddleware<AppEnv>(async function responseHeaders(c, next) {
  const incoming = c.req.header("X-Request-Id");
  const id = incoming && CLIENT_REQUEST_ID.test(incoming) ? incoming : newRequestId();
  c.set("requestId", id);
  await next();
  const headers = c.res.headers;
  headers.set("X-Request-Id", id);
  headers.set("X-Content-Type-Options", "nosniff");
  headers.set("Referrer-Policy", "no-referrer");
  headers.set("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
  if (!headers.has("Content-Security-Policy")) headers.set("Content-Security-Policy", API_CSP);
  if (!headers.has("X-Frame-Options")) headers.set("X-Frame-Options", "DENY");
});

export const MAX_BODY_BYTES = 1024 * 1024;

export function limitBody(maxSize = MAX_BODY_BYTES) {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError("payload_too_large", `The request body exceeds ${maxSize} bytes.`);
    },
  });
}
