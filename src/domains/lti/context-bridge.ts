import type { Env } from "../../env";
import { invocationContext, type ServiceContext } from "../../platform/service/context";

/**
 * Migration bridge, not a pattern: the grades path (platform-token.ts, passbacks.ts) still hands
 * `env` to the two functions of registrations and launch it calls (`currentSigningKey`,
 * `findLaunch`), which take the service context. Goes when grades passes its context.
 */
export function asContext(ctx: ServiceContext | Env): ServiceContext {
  if ("db" in ctx && typeof (ctx as ServiceContext).now === "function") return ctx as ServiceContext;
  return invocationContext({
    env: ctx as Env,
    requestId: "lti_grades",
    waitUntil: (promise) => void promise.catch(() => undefined),
  });
}
