/**
 * Rolling-window rate limiting with one-second buckets.
 *
 * A request at second `s` is allowed when the buckets of the last `windowSeconds` seconds
 * (`s - windowSeconds < b <= s`) hold fewer than `limit` hits. Denied requests are not counted,
 * so `retryAfterSeconds` is exact: it is the moment enough old buckets have slid out of the window.
 * Pure arithmetic, no I/O: the Durable Objects persist the buckets, this decides.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed right now (after this one, if it was allowed). */
  remaining: number;
  /** Seconds until the window is empty again, i.e. the full limit is available. */
  resetSeconds: number;
  /** Whole seconds (≥ 1) after which the next request will succeed; 0 when allowed. */
  retryAfterSeconds: number;
  windowSeconds: number;
}

const NOTHING_DROPPED: readonly number[] = [];

export class SlidingWindow {
  /** second → hits, kept sorted by insertion, which is chronological. */
  private readonly buckets = new Map<number, number>();
  private used = 0;
  /** The newest bucket's second (the Map's last key), kept so that no request walks the Map for it. */
  private newest: number | undefined;

  constructor(entries: Iterable<readonly [number, number]> = []) {
    for (const [second, count] of [...entries].sort((a, b) => a[0] - b[0])) {
      this.buckets.set(second, count);
      this.used += count;
      this.newest = second;
    }
  }

  /** Drops buckets that have left the window; returns the seconds that were dropped. */
  prune(nowMs: number, windowSeconds: number): readonly number[] {
    const oldestKept = Math.floor(nowMs / 1000) - windowSeconds + 1;
    let dropped: number[] | undefined;
    for (const [second, count] of this.buckets) {
      if (second >= oldestKept) break;
      this.buckets.delete(second);
      this.used -= count;
      dropped ??= [];
      dropped.push(second);
    }
    if (this.buckets.size === 0) this.newest = undefined;
    return dropped ?? NOTHING_DROPPED;
  }

  /** Decides without counting. */
  peek(nowMs: number, limit: number, windowSeconds: number): RateDecision {
    this.prune(nowMs, windowSeconds);
    return this.describe(nowMs, limit, windowSeconds, this.used < limit);
  }

  /** Counts one hit at `nowMs` when the limit allows it. */
  consume(nowMs: number, limit: number, windowSeconds: number): RateDecision & { second: number } {
    const { granted, ...decision } = this.take(nowMs, limit, windowSeconds, 1);
    return decision;
  }

  /**
   * Counts up to `wanted` hits at `nowMs`, as many as the limit still allows (a lease of several
   * requests at once); `allowed` when at least one was granted.
   */
  take(
    nowMs: number,
    limit: number,
    windowSeconds: number,
    wanted: number,
  ): RateDecision & { second: number; granted: number } {
    this.prune(nowMs, windowSeconds);
    // Buckets must stay chronological; a clock that steps back counts into the newest bucket.
    const second = Math.max(Math.floor(nowMs / 1000), this.newest ?? 0);
    const granted = Math.max(0, Math.min(wanted, limit - this.used));
    if (granted > 0) {
      this.buckets.set(second, (this.buckets.get(second) ?? 0) + granted);
      this.used += granted;
      this.newest = second;
    }
    return { ...this.describe(nowMs, limit, windowSeconds, granted > 0), second, granted };
  }

  /**
   * Takes back up to `count` hits of `second` (a sign-in that turned out to be legitimate, the
   * unused rest of a lease); returns how many were taken back.
   */
  refund(second: number, count = 1): number {
    const held = this.buckets.get(second);
    if (!held) return 0;
    const returned = Math.min(held, count);
    if (returned === held) {
      this.buckets.delete(second);
      if (second === this.newest) this.newest = lastKey(this.buckets);
    } else this.buckets.set(second, held - returned);
    this.used -= returned;
    return returned;
  }

  /** Forgets every hit (a successful sign-in resets the failures of its pair). */
  clear(): readonly number[] {
    const seconds = [...this.buckets.keys()];
    this.buckets.clear();
    this.used = 0;
    this.newest = undefined;
    return seconds;
  }

  count(second: number): number {
    return this.buckets.get(second) ?? 0;
  }

  get total(): number {
    return this.used;
  }

  private describe(nowMs: number, limit: number, windowSeconds: number, allowed: boolean): RateDecision {
    const remaining = Math.max(0, limit - this.used);
    const resetSeconds =
      this.newest === undefined ? 0 : secondsUntil((this.newest + windowSeconds) * 1000, nowMs);
    let retryAfterSeconds = 0;
    if (!allowed) {
      // The earliest moment at which the hits still in the window drop below the limit.
      let stillCounted = this.used;
      let freeAtMs = Number.POSITIVE_INFINITY;
      for (const [second, count] of this.buckets) {
        stillCounted -= count;
        if (stillCounted < limit) {
          freeAtMs = (second + windowSeconds) * 1000;
          break;
        }
      }
      // A limit of zero (or fewer hits than the limit that never frees) falls back to a full window.
      retryAfterSeconds = Number.isFinite(freeAtMs)
        ? Math.max(1, secondsUntil(freeAtMs, nowMs))
        : windowSeconds;
    }
    return { allowed, limit, remaining, resetSeconds, retryAfterSeconds, windowSeconds };
  }
}

function lastKey(map: Map<number, number>): number | undefined {
  let last: number | undefined;
  for (const key of map.keys()) last = key;
  return last;
}

function secondsUntil(targetMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((targetMs - nowMs) / 1000));
}

/**
 * The response headers of CONVENTIONS.md for a decision. `policy` names the limit in the IETF
 * fields: "minute" for the per-minute limits CONVENTIONS.md describes; a limit with another window
 * (sign-in failures per 15 minutes) says what it is instead.
 */
export function rateLimitHeaders(decision: RateDecision, policy = "minute"): Record<string, string> {
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(decision.resetSeconds),
    "RateLimit-Policy": `"${policy}";q=${decision.limit};w=${decision.windowSeconds}`,
    RateLimit: `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
  if (!decision.allowed) headers["Retry-After"] = String(decision.retryAfterSeconds);
  return headers;
}
