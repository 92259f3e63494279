import { appForRequest } from "./app";
import { answerCachedPageEarly, cachedPageFor } from "./domains/catalog/early";
import type { Env } from "./env";
import { ApiError, problemBody } from "./platform/errors";
import { DEFAULT_FRAMING_HEADERS, requestIdFor, SECURITY_HEADERS } from "./platform/http/middleware";

export { ProgressRecorder } from "./domains/progress/recording/recorder";
export { TokenGate } from "./platform/auth/token-gate";
export { InstitutionBudget } from "./platform/ratelimit/institution-budget";
export { RateLimiter } from "./platform/ratelimit/rate-limiter";

/**
 * Hono hands only `Error` instances to onError; anything else thrown (some libraries throw plain
 * objects) would escape as the runtime's HTML error page. This keeps even those problem+json.
 */
async function fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  try {
    // Awaits only what is pending: on the hot path the copy check and the app are synchronous.
    const copy = cachedPageFor(request);
    const early = copy ? await answerCachedPageEarly(copy, request, env) : null;
    if (early) return early;
    const app = appForRequest(request);
    return await (app instanceof Promise ? await app : app).fetch(request, env, ctx);
  } catch (thrown) {
    const error = new ApiError(
      "internal_error",
      "An unexpected error occurred. Quote the request id when contacting support.",
    );
    const requestId = requestIdFor(request.headers.get("X-Request-Id"));
    console.error(
      JSON.stringify({
        level: "error",
        request_id: requestId,
        path: new URL(request.url).pathname,
        error: String(thrown),
      }),
    );
    const body = problemBody(new URL(request.url).origin, error.code, error.message, requestId);
    return new Response(JSON.stringify(body), {
      status: 500,
      headers: [
        ["Content-Type", "application/problem+json"],
        ["Cache-Control", "no-store"],
        ["X-Request-Id", requestId],
        ...SECURITY_HEADERS,
        ...DEFAULT_FRAMING_HEADERS,
      ] as [string, string][],
    });
  }
}

// Queue consumers and sweeps are imported when the runtime first calls them, like the route groups:
// an isolate that only answers HTTP never evaluates them, which keeps start-up small. (The test pool
// imports them ahead of the tests, test/helpers/apply-migrations.ts: there loading a module is I/O,
// and concurrent queue invocations awaiting one in-flight load would wait on another's I/O.)
export default {
  fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(
      import("./scheduled").then(({ runSweeps }) => runSweeps(env, ctx, controller.scheduledTime)),
    );
  },
  async queue(batch, env, ctx) {
    const { consumeQueue } = await import("./queue-consumers");
    await consumeQueue(batch, env, ctx);
  },
} satisfies ExportedHandler<Env>;
