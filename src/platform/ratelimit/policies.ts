/**
 * Per client IP, counted exactly by a RateLimiter object. (Public reads — the catalogue, the API
 * description — are limited by the `PUBLIC_RATE_LIMITER` binding instead; see edge-ip-limit.ts.)
 */
export const IP_POLICIES = {
  /** Sign-in attempts from one address per window. */
  signIn: { name: "sign-in", limit: 30 },
  /** LTI login initiations, launch callbacks and session exchanges from one address per window. */
  lti: { name: "lti", limit: 120 },
  /**
   * Requests from one address with a token nobody issued: against token guessing, and against the
   * hash, object and D1 read each guess costs.
   */
  authFailures: { name: "auth-failures", limit: 60 },
} as const;

/** Failed sign-ins for one e-mail address, against password guessing from many addresses. */
export const SIGN_IN_FAILURES = { limit: 10, windowSeconds: 15 * 60, policy: "sign-in-failures" } as const;
