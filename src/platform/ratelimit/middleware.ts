import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv, Env } from "../../env";
import { config } from "../config";
import { ApiError } from "../errors";
import { type RateDecision, rateLimitHeaders } from "./window";

export function clientIpOf(headers: Headers): string {
  return headers.get("CF-Connecting-IP") ?? "unknown";
}

export function clientIp(c: Context): string {
  return clientIpOf(c.req.raw.headers);
}

export function limiterFor(env: Env, key: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(key));
}

export function rateLimitedError(decision: RateDecision, what: string, policy?: string): ApiError {
  return new ApiError("rate_limited", `Too many ${what}; retry after ${decision.retryAfterSeconds} s.`, {
    headers: rateLimitHeaders(decision, policy),
  });
}

/** Counts one request of the caller's address under `policy`, in that address's RateLimiter object. */
export function consumeByIp(
  c: Context<AppEnv>,
  policy: { name: string; limit: number },
): Promise<RateDecision> {
  return limiterFor(c.env, `ip:${policy.name}:${clientIp(c)}`).consume(
    policy.limit,
    config(c.env).rateLimitWindowSeconds,
  );
}

/**
 * Puts a limit's headers on the route's response, unless the route was refused by a stricter limit
 * inside it (sign-in's per-e-mail failures): that 429 describes its own limit, and these headers
 * would tell the client it may go on.
 */
export function describeLimit(c: Context, headers: Record<string, string>): void {
  if (c.res.status === 429) return;
  const responseHeaders = c.res.headers;
  for (const [name, value] of Object.entries(headers)) responseHeaders.set(name, value);
}

/** Per-client-IP limit for endpoints that take no token. */
export function limitByIp(policy: { name: string; limit: number }) {
  return createMiddleware<AppEnv>(async function limitByIp(c, next) {
    const decision = await consumeByIp(c, policy);
    if (!decision.allowed) throw rateLimitedError(decision, "requests from this address");
    await next();
    describeLimit(c, rateLimitHeaders(decision));
  });
}
