import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import type { PrincipalContext, ServiceContext } from "../service/context";
import { invocationContext } from "../service/context";

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
 * Builds the request's service context once, after `responseHeaders` has chosen its request id. Used
 * by every documented route group (`createApiApp`, platform/openapi.ts), not by the platform's
 * conventions: the context brings the database client and the settings' schema, which the liveness
 * route and a fresh isolate's start must not load (the start-up benchmark measured it).
 */
export const provideContext = createMiddleware<AppEnv>(async function provideContext(c, next) {
  c.set("ctx", invocationContext({ env: c.env, requestId: c.get("requestId"), waitUntil: waitUntilOf(c) }));
  await next();
});

/** The service context of a request a token authenticated (every `tokenRoute`'s handler). */
export function principalContext(c: Context<AppEnv>): PrincipalContext {
  const ctx = c.get("ctx");
  // `authenticate` replaced the request's context with one that carries the principal.
  if (!("principal" in ctx)) throw new Error("principalContext outside a token route");
  return ctx as PrincipalContext;
}
