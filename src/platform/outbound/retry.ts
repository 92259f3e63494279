import { MAX_QUEUE_DELAY_SECONDS } from "../queue";

/**
 * When a failed outbound call is tried again. Pure, so the arithmetic is unit-tested apart from any
 * queue: one delay per retry in `schedule`, each with ±20% jitter to spread a burst of failures, a
 * receiver's longer Retry-After winning, and Queues' 12-hour cap on a delay.
 */

const JITTER = 0.2;

/** Seconds of `Retry-After` (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number): number | null {
  if (!header) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const when = Date.parse(text);
  return Number.isNaN(when) ? null : Math.max(0, Math.ceil((when - now) / 1000));
}

/**
 * The delay before the next attempt after attempt number `attempt` (1-based) failed, or null when the
 * retries are used up (`schedule.length` of them).
 */
export function retryDelaySeconds(
  attempt: number,
  schedule: readonly number[],
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number | null {
  const base = schedule[attempt - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  return Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(jittered, retryAfterSeconds ?? 0));
}

/** Categories worth trying again: a refused target stays refused until its URL changes. */
export function isRetryable(errorCode: string | null): boolean {
  return errorCode !== "target_refused";
}

/**
 * The one retry policy of every delivery (webhooks, LTI passback, and the next adapter): the delay
 * before the next attempt after attempt `attempt` (1-based) failed with a response carrying
 * `retryAfterHeader` (or none), or null when the `schedule`'s retries are used up.
 */
export function nextRetrySeconds(
  attempt: number,
  schedule: readonly number[],
  retryAfterHeader: string | null,
  now: number,
  random: () => number = Math.random,
): number | null {
  return retryDelaySeconds(attempt, schedule, parseRetryAfter(retryAfterHeader, now), random);
}
