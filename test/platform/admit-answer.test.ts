import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  type AdmitResult,
  decodeAdmitAnswer,
  encodeAdmittedCurrent,
} from "../../src/platform/auth/admit-answer";
import { hashToken } from "../../src/platform/auth/tokens";
import { rateLimitHeaders, SlidingWindow } from "../../src/platform/ratelimit/window";
import { call } from "../helpers/api";
import { createTenant } from "../helpers/tenants";

const T0 = 1_700_000_000_000;

describe("TokenGate's compact answer", () => {
  it("stands for the same decision, so the same rate-limit headers reach the client", () => {
    const window = new SlidingWindow();
    window.consume(T0, 1_000, 60);
    const { second: _second, ...decision } = window.consume(T0 + 2_500, 1_000, 60);
    for (const touch of [true, false]) {
      const result = decodeAdmitAnswer(encodeAdmittedCurrent(decision, touch), 1_712_345_678_901);
      expect(result).toEqual({ outcome: "admitted", version: 1_712_345_678_901, rate: decision, touch });
      expect(rateLimitHeaders((result as Extract<AdmitResult, { outcome: "admitted" }>).rate)).toEqual(
        rateLimitHeaders(decision),
      );
    }
  });

  it("keeps large limits and a window other than a minute exact", () => {
    const decision = {
      allowed: true,
      limit: 1_000_000_000,
      remaining: 999_999_999,
      resetSeconds: 3,
      retryAfterSeconds: 0,
      windowSeconds: 5,
    };
    expect(decodeAdmitAnswer(encodeAdmittedCurrent(decision, false), 7)).toMatchObject({
      rate: decision,
      touch: false,
    });
  });

  it("passes objects through as they came, such as the answers of an object still on the previous code", () => {
    const rate = {
      allowed: true,
      limit: 100,
      remaining: 97,
      resetSeconds: 60,
      retryAfterSeconds: 0,
      windowSeconds: 60,
    };
    const answers: AdmitResult[] = [
      { outcome: "admitted", version: 7, rate, touch: false },
      { outcome: "unauthenticated", reason: "revoked" },
    ];
    for (const answer of answers) expect(decodeAdmitAnswer(answer, 7)).toBe(answer);
  });

  it("refuses a compact answer it cannot read rather than sending wrong headers", () => {
    expect(() => decodeAdmitAnswer("100 99 60 60 0", undefined)).toThrow(/does not hold/);
    expect(() => decodeAdmitAnswer("100 99 60 60", 7)).toThrow(/cannot read/);
    expect(() => decodeAdmitAnswer("100 99 sixty 60 0", 7)).toThrow(/cannot read/);
  });
});

describe("TokenGate's answer formats, as callers of either code version see them during a deployment", () => {
  it("answers objects unless the caller asks for the compact format, and both stand for the same count", async () => {
    const { admin } = await createTenant({ plan: "free" });
    const tokenHash = await hashToken(admin.token);
    const gate = env.TOKEN_GATE.get(env.TOKEN_GATE.idFromName(tokenHash));

    // A fresh isolate holds no copy: it gets the principal even when it asks for the compact format.
    const first = await gate.admit(tokenHash, undefined, "compact");
    if (typeof first === "string" || first.outcome !== "admitted")
      throw new Error(`unexpected answer ${JSON.stringify(first)}`);
    expect(first.principal?.token.id).toBe(admin.tokenId);
    expect(first.rate).toMatchObject({ allowed: true, limit: 100 });

    // A caller on the previous code sends no format and reads objects only.
    const old = await gate.admit(tokenHash, first.version);
    expect(old).toMatchObject({
      outcome: "admitted",
      version: first.version,
      rate: { remaining: first.rate.remaining - 1 },
    });
    expect(old).not.toHaveProperty("principal");

    const compact = await gate.admit(tokenHash, first.version, "compact");
    expect(typeof compact).toBe("string");
    expect(decodeAdmitAnswer(compact, first.version)).toMatchObject({
      outcome: "admitted",
      rate: { remaining: first.rate.remaining - 2, limit: 100 },
    });

    // A stale copy gets the principal whatever the format.
    expect(await gate.admit(tokenHash, first.version - 1, "compact")).toMatchObject({
      outcome: "admitted",
      principal: { token: { id: admin.tokenId } },
    });
  });
});

describe("the rate-limit headers of a request answered in the compact format", () => {
  it("are exactly those of the token's window", async () => {
    const { admin } = await createTenant({ plan: "free" });
    // The first request brings this isolate a copy of the principal; the second is answered compactly.
    const first = await call("/api/auth/me", { token: admin.token });
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const second = await call("/api/auth/me", { token: admin.token });
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    // Free: 100 requests per window; the window is 10 s under test (vitest.config.ts), both hits in its newest second.
    expect(
      Object.fromEntries([...second.headers].filter(([name]) => /ratelimit|retry-after/i.test(name))),
    ).toEqual({
      "x-ratelimit-limit": "100",
      "x-ratelimit-remaining": "98",
      "x-ratelimit-reset": "10",
      "ratelimit-policy": '"minute";q=100;w=10',
      ratelimit: '"minute";r=98;t=10',
    });
  });
});
