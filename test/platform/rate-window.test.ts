import { describe, expect, it } from "vitest";
import { rateLimitHeaders, SlidingWindow } from "../../src/platform/ratelimit/window";

const T0 = 1_700_000_000_000; // a whole second

describe("SlidingWindow", () => {
  it("allows exactly `limit` hits in a window and counts no denied hit", () => {
    const w = new SlidingWindow();
    const decisions = Array.from({ length: 150 }, (_, i) => w.consume(T0 + i, 100, 60));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    expect(decisions.slice(100).every((d) => !d.allowed)).toBe(true);
    expect(w.total).toBe(100);
    expect(decisions[99]!.remaining).toBe(0);
    expect(decisions[0]!.remaining).toBe(99);
  });

  it("says when the next request will succeed, and it does", () => {
    const w = new SlidingWindow();
    for (let i = 0; i < 100; i++) w.consume(T0 + 250, 100, 60);
    const denied = w.consume(T0 + 30_400, 100, 60);
    expect(denied.allowed).toBe(false);
    // The hits of second T0 leave the window at T0 + 60 s: 29.6 s away, so 30 whole seconds.
    expect(denied.retryAfterSeconds).toBe(30);
    expect(w.consume(T0 + 30_400 + 29_000, 100, 60).allowed).toBe(false);
    expect(w.consume(T0 + 30_400 + 30_000, 100, 60).allowed).toBe(true);
  });

  it("frees only what slid out: hits spread over time leave one by one", () => {
    const w = new SlidingWindow();
    for (let s = 0; s < 10; s++) w.consume(T0 + s * 1000, 10, 60);
    const denied = w.consume(T0 + 10_000, 10, 60);
    expect(denied.retryAfterSeconds).toBe(50);
    expect(w.consume(T0 + 60_000, 10, 60).allowed).toBe(true); // second 0 left
    expect(w.consume(T0 + 60_500, 10, 60).allowed).toBe(false); // second 1 still in
    expect(w.consume(T0 + 61_000, 10, 60).allowed).toBe(true);
  });

  it("reports the reset as the time until the whole window is empty", () => {
    const w = new SlidingWindow();
    w.consume(T0, 5, 60);
    const d = w.consume(T0 + 20_000, 5, 60);
    expect(d.resetSeconds).toBe(60);
    expect(w.peek(T0 + 50_000, 5, 60).resetSeconds).toBe(30);
    expect(w.peek(T0 + 80_000, 5, 60)).toMatchObject({ remaining: 5, resetSeconds: 0 });
  });

  it("never answers a Retry-After below one second", () => {
    const w = new SlidingWindow();
    w.consume(T0, 1, 1);
    const denied = w.consume(T0 + 999, 1, 1);
    expect(denied.allowed).toBe(false);
    expect(denied.retryAfterSeconds).toBe(1);
  });

  it("refunds a hit", () => {
    const w = new SlidingWindow();
    const hit = w.consume(T0, 1, 60);
    expect(w.consume(T0 + 1, 1, 60).allowed).toBe(false);
    expect(w.refund(hit.second)).toBe(1);
    expect(w.consume(T0 + 2, 1, 60).allowed).toBe(true);
  });

  it("resumes from persisted buckets", () => {
    const w = new SlidingWindow([
      [T0 / 1000 + 1, 3],
      [T0 / 1000, 2],
    ]);
    expect(w.total).toBe(5);
    expect(w.consume(T0 + 2000, 5, 60).allowed).toBe(false);
  });

  it("reports the reset from the newest bucket still counted, after a refund, a resume or an empty window", () => {
    const w = new SlidingWindow();
    w.consume(T0, 5, 60);
    const late = w.consume(T0 + 10_000, 5, 60);
    expect(late.resetSeconds).toBe(60);
    // Refunding the newest bucket's only hit makes the older bucket the newest again.
    w.refund(late.second);
    expect(w.peek(T0 + 10_000, 5, 60)).toMatchObject({ remaining: 4, resetSeconds: 50 });
    // Everything slides out, then a new hit starts a new window.
    expect(w.peek(T0 + 100_000, 5, 60)).toMatchObject({ remaining: 5, resetSeconds: 0 });
    expect(w.consume(T0 + 100_000, 5, 60)).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 60 });
    // Resumed buckets, stored in any order: the newest is the latest second.
    const resumed = new SlidingWindow([
      [T0 / 1000 + 20, 1],
      [T0 / 1000, 1],
    ]);
    expect(resumed.peek(T0 + 30_000, 5, 60).resetSeconds).toBe(50);
  });

  it("keeps counting when the clock steps back", () => {
    const w = new SlidingWindow();
    w.consume(T0 + 5_000, 2, 60);
    w.consume(T0 + 1_000, 2, 60);
    expect(w.consume(T0 + 6_000, 2, 60).allowed).toBe(false);
  });
});

describe("rateLimitHeaders", () => {
  it("renders the legacy and the IETF draft fields, and Retry-After only when denied", () => {
    const allowed = rateLimitHeaders({
      allowed: true,
      limit: 100,
      remaining: 7,
      resetSeconds: 42,
      retryAfterSeconds: 0,
      windowSeconds: 60,
    });
    expect(allowed).toEqual({
      "X-RateLimit-Limit": "100",
      "X-RateLimit-Remaining": "7",
      "X-RateLimit-Reset": "42",
      "RateLimit-Policy": '"minute";q=100;w=60',
      RateLimit: '"minute";r=7;t=42',
    });
    const denied = rateLimitHeaders({
      allowed: false,
      limit: 100,
      remaining: 0,
      resetSeconds: 42,
      retryAfterSeconds: 3,
      windowSeconds: 60,
    });
    expect(denied["Retry-After"]).toBe("3");
  });
});
