import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { toHex } from "../crypto/encoding";
import { ApiError } from "../errors";
import { routePathPattern } from "./method-not-allowed";

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

/** The body limits routes declare with `acceptsBodyUpTo`, by the declaring middleware. */
const DECLARED_BODY_LIMITS = new WeakMap<MiddlewareHandler, number>();

/**
 * A route that takes a larger body than `MAX_BODY_BYTES` says so in its own `middleware` (the bulk
 * member upload: `acceptsBodyUpTo(5 * 1024 * 1024)`), so the platform keeps no list of domain paths.
 * The limit is enforced where every body limit is, by `limitBody` ahead of all routes (before
 * authentication), which finds the declaration in its app's route table; in the route's own chain
 * the declaration does nothing.
 */
export function acceptsBodyUpTo(maxSize: number): MiddlewareHandler {
  const declaration: MiddlewareHandler = (_c, next) => next();
  DECLARED_BODY_LIMITS.set(declaration, maxSize);
  return declaration;
}

function bodyLimitOf(maxSize: number) {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError("payload_too_large", `The request body exceeds ${maxSize} bytes.`);
    },
  });
}

/** What this reads of an app: its route table (Hono's `app.routes`), once registered. */
interface RouteTable {
  routes: readonly { path: string; handler: unknown }[];
}

/**
 * The body limit of every request that may carry one: `maxSize`, or the larger one a route of the app
 * declares for its path (whatever the method, so that a 405 on that path reads the same limit). The
 * declarations are read from the app's route table at the first request, after registration.
 */
export function limitBody(app: RouteTable, maxSize = MAX_BODY_BYTES) {
  const standard = bodyLimitOf(maxSize);
  let larger: { pattern: RegExp; limit: MiddlewareHandler }[] | null = null;
  return createMiddleware<AppEnv>(function limitBody(c, next) {
    larger ??= declaredLimits(app);
    const special = larger.length > 0 ? larger.find(({ pattern }) => pattern.test(c.req.path)) : undefined;
    return (special?.limit ?? standard)(c, next);
  });
}

function declaredLimits(app: RouteTable): { pattern: RegExp; limit: MiddlewareHandler }[] {
  const declared: { pattern: RegExp; limit: MiddlewareHandler }[] = [];
  for (const route of app.routes) {
    const maxSize = DECLARED_BODY_LIMITS.get(route.handler as MiddlewareHandler);
    if (maxSize !== undefined)
      declared.push({ pattern: routePathPattern(route.path), limit: bodyLimitOf(maxSize) });
  }
  return declared;
}
