import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { hashToken } from "../../src/platform/auth/tokens";
import { advanceClock, resetClock } from "../../src/platform/service/clock";
import { call } from "../helpers/api";
import { createTenant, freshIp, mintToken } from "../helpers/tenants";

// IP_POLICIES.authFailures: 60 unknown tokens per address per window (10 s in vitest.config.ts).
const LIMIT = 60;

function guessedToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return (
    "lng_" +
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "")
  );
}

afterEach(() => resetClock());

describe("per-address limit of refused tokens", () => {
  it("answers 429 once an address has sent too many unknown tokens, while its known tokens and other addresses go on", async () => {
    const { admin } = await createTenant();
    const ip = freshIp();
    // Seen by this isolate before the guessing starts.
    expect(
      (await call("/api/auth/me", { token: admin.token, headers: { "CF-Connecting-IP": ip } })).status,
    ).toBe(200);

    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await call("/api/auth/me", { token: guessedToken(), headers: { "CF-Connecting-IP": ip } });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.every((s) => s === 401)).toBe(true);

    const refused = await call("/api/auth/me", {
      token: guessedToken(),
      headers: { "CF-Connecting-IP": ip },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Content-Type")).toBe("application/problem+json");
    expect(refused.headers.get("Cache-Control")).toBe("no-store");
    const retryAfter = Number(refused.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(await refused.json<any>()).toMatchObject({ status: 429, code: "rate_limited" });

    // The next guess is refused before any hashing or Durable Object work.
    const again = await call("/api/auth/me", { token: guessedToken(), headers: { "CF-Connecting-IP": ip } });
    expect(again.status).toBe(429);
    await again.arrayBuffer();

    // A token this isolate knows keeps working from the same address; other addresses are untouched.
    expect(
      (await call("/api/auth/me", { token: admin.token, headers: { "CF-Connecting-IP": ip } })).status,
    ).toBe(200);
    expect(
      (await call("/api/auth/me", { token: guessedToken(), headers: { "CF-Connecting-IP": freshIp() } }))
        .status,
    ).toBe(401);
  });

  it("does not count malformed or missing tokens, which cost nothing to refuse", async () => {
    const ip = freshIp();
    for (let i = 0; i < LIMIT + 5; i++) {
      const res = await call("/api/auth/me", {
        token: i % 2 ? "not-a-token" : undefined,
        headers: { "CF-Connecting-IP": ip },
      });
      expect(res.status).toBe(401);
      await res.arrayBuffer();
    }
  });

  it("does not count revoked tokens either, so an integration's stale token cannot lock its address's new tokens out", async () => {
    const { admin } = await createTenant();
    const stale = await mintToken(admin, ["content:read"]);
    expect(
      (await call(`/api/integrations/tokens/${stale.id}`, { method: "DELETE", token: admin.token })).status,
    ).toBe(204);
    const ip = freshIp();
    for (let i = 0; i < LIMIT + 5; i++) {
      const res = await call("/api/auth/me", { token: stale.token, headers: { "CF-Connecting-IP": ip } });
      expect(res.status).toBe(401);
      await res.arrayBuffer();
    }
    const fresh = await mintToken(admin, ["content:read"]);
    expect(
      (await call("/api/auth/me", { token: fresh.token, headers: { "CF-Connecting-IP": ip } })).status,
    ).toBe(200);
  });

  it("tells a refused address the time left, not the time first announced", async () => {
    const ip = freshIp();
    let first: Response | undefined;
    for (let i = 0; i <= LIMIT && !first; i++) {
      const res = await call("/api/auth/me", { token: guessedToken(), headers: { "CF-Connecting-IP": ip } });
      if (res.status === 429) first = res;
      await res.arrayBuffer();
    }
    expect(first).toBeDefined();
    // The 60 guesses take well under a second, so most of the 10-second window is still ahead.
    const announced = Number(first!.headers.get("Retry-After"));
    expect(announced).toBeGreaterThanOrEqual(5);
    // Two seconds later (the clock moved on, not slept out).
    advanceClock(2_100);
    const later = await call("/api/auth/me", { token: guessedToken(), headers: { "CF-Connecting-IP": ip } });
    await later.arrayBuffer();
    expect(later.status).toBe(429);
    expect(Number(later.headers.get("Retry-After"))).toBeLessThanOrEqual(announced - 2);
  });

  it("leaves nothing in storage for a guessed token", async () => {
    const token = guessedToken();
    expect((await call("/api/auth/me", { token, headers: { "CF-Connecting-IP": freshIp() } })).status).toBe(
      401,
    );
    const stub = env.TOKEN_GATE.get(env.TOKEN_GATE.idFromName(await hashToken(token)));
    const tables = await runInDurableObject(stub, (_, state) =>
      state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'")
        .toArray(),
    );
    expect(tables).toEqual([]);
  });
});
