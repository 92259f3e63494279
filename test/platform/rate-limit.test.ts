import { abortAllDurableObjects } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "../../src/platform/service/clock";
import { call } from "../helpers/api";
import { createTenant } from "../helpers/tenants";

// vitest.config.ts shortens the rolling window to 10 s; production keeps 60 s.
const WINDOW = 10;

async function burst(token: string, count: number) {
  return Promise.all(Array.from({ length: count }, () => call("/api/auth/me", { token })));
}

async function expectExactLimit(plan: "free" | "pro", limit: number, extra: number) {
  const { admin } = await createTenant({ plan });
  const responses = await burst(admin.token, limit + extra);
  const ok = responses.filter((r) => r.status === 200);
  const limited = responses.filter((r) => r.status === 429);
  expect(ok).toHaveLength(limit);
  expect(limited).toHaveLength(extra);

  for (const res of ok) {
    expect(res.headers.get("X-RateLimit-Limit")).toBe(String(limit));
    expect(res.headers.get("RateLimit-Policy")).toBe(`"minute";q=${limit};w=${WINDOW}`);
  }
  const remaining = ok.map((r) => Number(r.headers.get("X-RateLimit-Remaining"))).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: limit }, (_, i) => i));

  const rejected = limited[0]!;
  expect(rejected.headers.get("Content-Type")).toBe("application/problem+json");
  const body = await rejected.json<any>();
  expect(body).toMatchObject({ status: 429, code: "rate_limited" });
  const retryAfter = Number(rejected.headers.get("Retry-After"));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW);
  expect(rejected.headers.get("X-RateLimit-Remaining")).toBe("0");
  expect(rejected.headers.get("RateLimit")).toMatch(/^"minute";r=0;t=\d+$/);

  // Still refused just before Retry-After…
  const latestRetryAfter = Math.max(...limited.map((r) => Number(r.headers.get("Retry-After"))));
  const deniedAt = Date.now();
  expect((await call("/api/auth/me", { token: admin.token })).status).toBe(429);
  // …and served once it has passed: the clock moves on instead of the test sleeping (the token's
  // Durable Object reads the same injectable clock).
  advanceClock(latestRetryAfter * 1000 - (Date.now() - deniedAt) + 50);
  const next = await call("/api/auth/me", { token: admin.token });
  expect(next.status).toBe(200);
}

afterEach(() => resetClock());

describe("per-token rate limits", () => {
  it("gives a Free token exactly 100 of 150 concurrent requests, then serves again after Retry-After", async () => {
    await expectExactLimit("free", 100, 50);
  });

  it("gives a Pro token exactly 1,000 of 1,050 concurrent requests", async () => {
    await expectExactLimit("pro", 1000, 50);
  });

  it("counts each token on its own", async () => {
    const { admin, learner } = await createTenant({ plan: "free" });
    await burst(admin.token, 100);
    expect((await call("/api/auth/me", { token: admin.token })).status).toBe(429);
    expect((await call("/api/auth/me", { token: learner.token })).status).toBe(200);
  });

  it("keeps counting after the token's Durable Object is restarted", async () => {
    const { admin } = await createTenant({ plan: "free" });
    const first = await burst(admin.token, 60);
    expect(first.every((r) => r.status === 200)).toBe(true);
    // Buckets are written every 200 ms; a restart right after that must not forget them.
    await new Promise((r) => setTimeout(r, 400));
    await abortAllDurableObjects();
    const second = await burst(admin.token, 60);
    expect(second.filter((r) => r.status === 200)).toHaveLength(40);
    expect(second.filter((r) => r.status === 429)).toHaveLength(20);
  });

  it("puts rate-limit headers on error responses too", async () => {
    const { learner } = await createTenant({ plan: "free" });
    const res = await call("/api/integrations/tokens/tok_missing", {
      method: "DELETE",
      token: learner.token,
    });
    expect(res.status).toBe(404);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("100");
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("99");
  });
});
