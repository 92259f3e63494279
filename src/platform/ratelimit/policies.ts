import type { Env } from "../../env";

/** The rolling window of every per-minute limit; configurable so tests need not wait a minute. */
export function windowSecondsFrom(env: Pick<Env, "RATE_LIMIT_WINDOW_SECONDS">): number {
  const seconds = Number(env.RATE_LIMIT_WINDOW_SECONDS ?? 60);
  return Number.isInteger(seconds) && seconds > 0 ? seconds : 60;
}

/** Per client IP, for endpoints that take no token. */
export const IP_POLICIES = {
  /** Sign-in attempts from one address per window. */
  signIn: { name: "sign-in", limit: 30 },
  /** Public reads (catalog, API description) from one address per window. */
  publicRead: { name: "public", limit: 600 },
} as const;

/** Failed sign-ins for one e-mail address, against password guessing from many addresses. */
export const SIGN_IN_FAILURES = { limit: 10, windowSeconds: 15 * 60 } as const;
