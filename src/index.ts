import { buildApp } from "./app";
import type { Env } from "./env";
import { purgeExpiredIdempotencyKeys } from "./platform/http/idempotency";

export { TokenGate } from "./platform/ratelimit/token-gate";
export { RateLimiter } from "./platform/ratelimit/rate-limiter";

const app = buildApp();

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(purgeExpiredIdempotencyKeys(env.DB));
  },
} satisfies ExportedHandler<Env>;
