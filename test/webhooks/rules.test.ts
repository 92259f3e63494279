import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryDelaySeconds } from "../../src/domains/webhooks/retry-policy";
import { isPrivateHost, targetUrlProblem } from "../../src/domains/webhooks/target-url";

describe("retry policy", () => {
  const schedule = [60, 600, 6000];

  it("retries exactly three times, with the schedule's delays within ±20%", () => {
    expect(retryDelaySeconds(1, schedule, null, () => 0.5)).toBe(60);
    expect(retryDelaySeconds(2, schedule, null, () => 0)).toBe(480);
    expect(retryDelaySeconds(3, schedule, null, () => 0.9999)).toBe(7200);
    expect(retryDelaySeconds(4, schedule, null)).toBeNull();
    for (let i = 0; i < 200; i++) {
      const d = retryDelaySeconds(2, schedule, null)!;
      expect(d).toBeGreaterThanOrEqual(480);
      expect(d).toBeLessThanOrEqual(720);
    }
  });

  it("takes a longer Retry-After, never a shorter one, and caps at the queue's 12 hours", () => {
    expect(retryDelaySeconds(1, schedule, 300, () => 0.5)).toBe(300);
    expect(retryDelaySeconds(1, schedule, 5, () => 0.5)).toBe(60);
    expect(retryDelaySeconds(1, schedule, 1_000_000, () => 0.5)).toBe(43_200);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120);
    expect(parseRetryAfter("Sat, 21 Nov 2026 10:05:00 GMT", now)).toBe(300);
    expect(parseRetryAfter("Sat, 21 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});

describe("target hosts", () => {
  it.each([
    ["localhost", true],
    ["LOCALHOST.", true],
    ["printer.local", true],
    ["10.0.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["192.0.2.1", true],
    ["198.18.0.1", true],
    ["224.0.0.1", true],
    ["255.255.255.255", true],
    ["8.8.8.8", false],
    ["[::]", true],
    ["[::1]", true],
    ["[fc00::1]", true],
    ["[ff02::1]", true],
    ["[::ffff:7f00:1]", true],
    ["[::ffff:808:808]", false],
    ["[64:ff9b::a00:1]", true],
    ["[2001:4860:4860::8888]", false],
    ["hooks.example.com", false],
  ])("%s private: %s", (host, expected) => {
    expect(isPrivateHost(host)).toBe(expected);
  });

  it("explains each refusal", () => {
    expect(targetUrlProblem("https://example.com/" + "a".repeat(2100), false)).toMatch(/2048/);
    expect(targetUrlProblem("https://example.com/#frag", false)).toMatch(/fragment/);
    expect(targetUrlProblem("https://example.com/hook", false)).toBeNull();
    expect(targetUrlProblem("http://localhost:8080/hook", true)).toBeNull();
  });
});
