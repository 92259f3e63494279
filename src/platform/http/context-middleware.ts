import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { ApiError } from "../errors";
import type { PrincipalContext, ServiceContext } from "../service/context";
import { invocationContext, sessionBookmark, startElsewhere, tolerateStaleReads } from "../service/context";
import {
  formatPlacedBookmark,
  laterPlacedBookmark,
  type PlacedBookmark,
  parsePlacedBookmark,
} from "../service/d1-session";
import { type DatabaseBinding, databaseBindings } from "../service/databases";

/** The header a client sends back to read at least what it last saw, and every response's position. */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

declare module "hono" {
  interface ContextVariableMap {
    /** The service context of this request: set by `provideContext` (below) in every documented route group. */
    ctx: ServiceContext;
  }
}

function waitUntilOf(c: Context<AppEnv>): (promise: Promise<unknown>) => void {
  try {
    const execution = c.executionCtx;
    return (promise) => execution.waitUntil(promise);
  } catch {
    // `app.request()` in a unit test has no ExecutionContext: the work still runs, unawaited.
    return (promise) => void promise.catch(() => undefined);
  }
}

/**
 * The client's bookmark: where the request's D1 session starts in the database it names (a replica
 * at least as recent as what it last saw); null when it sent none (an empty header is none). Any
 * other value that is not a bookmark of one of this deployment's databases is refused before anything
 * is read or written.
 */
export function sentBookmark(header: string | undefined, env: AppEnv["Bindings"]): PlacedBookmark | null {
  const sent = header?.trim();
  if (!sent) return null;
  const placed = parsePlacedBookmark(sent);
  if (!placed || !databaseBindings(env).includes(placed.binding as DatabaseBinding))
    throw new ApiError(
      "invalid_bookmark",
      `${BOOKMARK_HEADER} must be a bookmark exactly as a response of this API sent it (four hex fields, e.g. 00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683, after a database's name for some institutions).`,
    );
  return placed;
}

/** Methods that change nothing: their reads may come from a replica as recent as the client's bookmark. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Builds the request's service context once, after `responseHeaders` has chosen its request id, in a
 * D1 session: a read (GET, HEAD) starts at the client's `X-D1-Bookmark` (a replica at least as recent
 * as what the client last saw) or, without one, at the primary; a write starts at the primary whatever
 * it was sent (its checks must read the latest state, and the primary is never behind a bookmark).
 * Answers the latest bookmark in `X-D1-Bookmark` (errors included): the session's, the one the client
 * sent, or a cached page's, whichever is latest; none when none of them exists. Used by every
 * documented route group (`createApiApp`, platform/openapi.ts) and the dashboard, not by the
 * platform's conventions: the context brings the database client and the settings' schema, which the
 * liveness route and a fresh isolate's start must not load (the start-up benchmark measured it).
 */
export const provideContext = createMiddleware<AppEnv>(async function provideContext(c, next) {
  const sent = sentBookmark(c.req.header(BOOKMARK_HEADER), c.env);
  const safe = SAFE_METHODS.has(c.req.method);
  // Every request starts in DB; a bookmark of another database is where the session starts once the
  // request moves there (its institution's database: `useDatabase`).
  const ctx = invocationContext({
    env: c.env,
    requestId: c.get("requestId"),
    waitUntil: waitUntilOf(c),
    session: safe && sent?.binding === "DB" ? sent.bookmark : "first-primary",
  });
  if (safe && sent && sent.binding !== "DB") startElsewhere(ctx, sent.binding, sent.bookmark);
  c.set("ctx", ctx);
  await next();
  // The context as the route left it (`authenticate` layers a principal over the same session). A
  // cached page's bookmark (the response's header) is DB's.
  const cached = c.res.headers.get(BOOKMARK_HEADER);
  const own = sessionBookmark(c.get("ctx"));
  const bookmark = laterPlacedBookmark(
    laterPlacedBookmark(cached ? parsePlacedBookmark(cached) : null, sent),
    own ? parsePlacedBookmark(own) : null,
  );
  if (bookmark) c.res.headers.set(BOOKMARK_HEADER, formatPlacedBookmark(bookmark));
});

/**
 * For routes whose reads tolerate a replica's lag (the public catalogue): without a client bookmark,
 * the request's session starts at any replica instead of the primary.
 */
export const staleReadsTolerated = createMiddleware<AppEnv>(async function staleReadsTolerated(c, next) {
  tolerateStaleReads(c.get("ctx"));
  await next();
});

/** The service context of a request a token authenticated (every `tokenRoute`'s handler). */
export function principalContext(c: Context<AppEnv>): PrincipalContext {
  const ctx = c.get("ctx");
  // `authenticate` replaced the request's context with one that carries the principal.
  if (!("principal" in ctx)) throw new Error("principalContext outside a token route");
  return ctx as PrincipalContext;
}
