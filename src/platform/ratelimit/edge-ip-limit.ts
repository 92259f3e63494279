import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { ApiError } from "../errors";
import { clientIp } from "./middleware";

/** The `period` of the `[[ratelimits]]` bindings in wrangler.toml (the binding allows 10 or 60). */
export const EDGE_LIMIT_PERIOD_SECONDS = 60;

type RateLimitBindingName = {
  [K in keyof AppEnv["Bindings"]]: AppEnv["Bindings"][K] extends RateLimit ? K : never;
}[keyof AppEnv["Bindings"]];

/**
 * Per-client-IP limit through a Workers Rate Limiting binding (`[[ratelimits]]` in wrangler.toml).
 * The binding counts in the memory of the colo, so it adds no Durable Object or D1 round trip, and a
 * cached public page stays free of I/O. It is approximate by design (per colo, eventually consistent),
 * which suits abuse protection; exact per-token limits stay with the TokenGate Durable Object.
 * The binding tells only allowed or not, so a refusal carries `Retry-After` of one whole period.
 */
export function limitByIpAtEdge(binding: RateLimitBindingName) {
  return createMiddleware<AppEnv>(async function limitByIpAtEdge(c, next) {
    const { success } = await (c.env[binding] as RateLimit).limit({ key: clientIp(c) });
    if (!success) {
      throw new ApiError(
        "rate_limited",
        `Too many requests from this address; retry after ${EDGE_LIMIT_PERIOD_SECONDS} s.`,
        {
          headers: { "Retry-After": String(EDGE_LIMIT_PERIOD_SECONDS) },
        },
      );
    }
    await next();
  });
}
