import { describe, expect, it } from "vitest";
import { decodeAdmitAnswer, encodeAdmittedCurrent, type AdmitResult } from "../../src/platform/ratelimit/admit-answer";
import { rateLimitHeaders, SlidingWindow } from "../../src/platform/ratelimit/window";

const T0 = 1_700_000_000_000;

describe("TokenGate's compact answer", () => {
  it("stands for the same decision, so the same rate-limit headers reach the client", () => {
    const window = new SlidingWindow();
    window.consume(T0, 1_000, 60);
    const { second: _second, ...decision } = window.consume(T0 + 2_500, 1_000, 60);
    for (const touch of [true, false]) {
      const result = decodeAdmitAnswer(encodeAdmittedCurrent(decision, touch), 1_712_345_678_901);
      expect(result).toEqual({ outcome: "admitted", version: 1_712_345_678_901, rate: decision, touch });
      expect(rateLimitHeaders((result as Extract<AdmitResult, { outcome: "admitted" }>).rate)).toEqual(rateLimitHeaders(decision));
    }
  });

  it("keeps large limits and a window other than a minute exact", () => {
    const decision = { allowed: true, limit: 1_000_000_000, remaining: 999_999_999, resetSeconds: 5, retryAfterSeconds: 0, windowSeconds: 5 };
    expect(decodeAdmitAnswer(encodeAdmittedCurrent(decision, false), 7)).toMatchObject({ rate: decision, touch: false });
  });

  it("passes every other outcome through as it came", () => {
    const refused: AdmitResult = { outcome: "unauthenticated", reason: "revoked" };
    expect(decodeAdmitAnswer(refused, 7)).toBe(refused);
  });

  it("refuses a compact answer to a caller that sent no version", () => {
    expect(() => decodeAdmitAnswer("100 99 60 60 0", undefined)).toThrow(/does not hold/);
  });
});
