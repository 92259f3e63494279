import type { Env } from "../../env";
import { parseRetrySchedule } from "./retry-policy";

export interface DeliveryConfig {
  timeoutMs: number;
  retrySchedule: number[];
  disableAfterFailures: number;
  disableAfterMs: number;
}

function positive(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** The delivery settings of wrangler.toml's [vars], with safe defaults for anything unreadable. */
export function deliveryConfig(env: Env): DeliveryConfig {
  const vars = env as unknown as Record<string, string | undefined>;
  return {
    timeoutMs: positive(vars.WEBHOOK_TIMEOUT_MS, 10_000),
    retrySchedule: parseRetrySchedule(vars.WEBHOOK_RETRY_DELAYS_SECONDS),
    disableAfterFailures: positive(vars.WEBHOOK_DISABLE_AFTER_FAILURES, 20),
    disableAfterMs: positive(vars.WEBHOOK_DISABLE_AFTER_HOURS, 24) * 3_600_000,
  };
}

/** Workers allow six open connections per invocation; more would only queue inside the runtime. */
export const PARALLEL_SENDS = 6;
