import type { Context } from "hono";
import type { AppEnv } from "../../env";
import type { PrincipalContext, ServiceContext } from "../service/context";
import { invocationContext } from "../service/context";

declare module "hono" {
  interface ContextVariableMap {
    /** The service context of this request: set by `provideContext` (below) on every request. */
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
 * Builds the request's service context once. Called by `responseHeaders` (platform/http/middleware.ts)
 * as soon as it has chosen the request id, rather than as a middleware of its own: every request
 * passes there, and one dispatch less is measurable on the hot path.
 */
export function provideContext(c: Context<AppEnv>, requestId: string): void {
  c.set("ctx", invocationContext({ env: c.env, requestId, waitUntil: waitUntilOf(c) }));
}

/** The service context of a request a token authenticated (every `tokenRoute`'s handler). */
export function principalContext(c: Context<AppEnv>): PrincipalContext {
  const ctx = c.var.ctx;
  // `authenticate` replaced the request's context with one that carries the principal.
  if (!("principal" in ctx)) throw new Error("principalContext outside a token route");
  return ctx as PrincipalContext;
}
