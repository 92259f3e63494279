/**
 * When a failed delivery is tried again. Pure, so the arithmetic is unit-tested apart from the queue.
 */
export const MAX_RETRIES = 3;

import { MAX_QUEUE_DELAY_SECONDS as MAX_DELAY_SECONDS } from "../../platform/queue";

const JITTER = 0.2;

/**
 * Seconds of `Retry-After` (delta-seconds or an HTTP date), or null when absent or unreadable.
 */
export function parseRetryAfter(header: string | null, now: number): number | null {
  if (!header) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const when = Date.parse(text);
  return Number.isNaN(when) ? null : Math.max(0, Math.ceil((when - now) / 1000));
}

/**
 * The delay before the next attempt after attempt number `attempt` (1-based) failed, or null when
 * the retries are used up. Jitter of ±20% spreads a burst of failures; a receiver's longer
 * Retry-After wins.
 */
export function retryDelaySeconds(
  attempt: number,
  schedule: number[],
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number | null {
  if (attempt > MAX_RETRIES) return null;
  const base = schedule[attempt - 1]!;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  return Math.min(MAX_DELAY_SECONDS, Math.max(jittered, retryAfterSeconds ?? 0));
}
