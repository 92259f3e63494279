/**
 * Per client IP, counted exactly by a RateLimiter object. (Public reads — the catalogue, the API
 * description — are limited by the `PUBLIC_RATE_LIMITER` binding instead; see edge-ip-limit.ts.)
 */
export const IP_POLICIES = {
  /** Sign-in attempts from one address per window. */
  signIn: { name: "sign-in", limit: 30 },
  /** LTI login initiations, launch callbacks and session exchanges from one address per window. */
  lti: { name: "lti", limit: 120 },
  /** SSO sign-in beginnings, IdP callbacks and code exchanges from one address per window. */
  sso: { name: "sso", limit: 120 },
  /**
   * Requests from one address with a token nobody issued: against token guessing, and against the
   * hash, object and D1 read each guess costs.
   */
  authFailures: { name: "auth-failures", limit: 60 },
} as const;

/**
 * Failed sign-ins, counted the way Auth0's brute-force protection counts them: per (e-mail, client
 * address) pair, which blocks that pair only, so that guesses from elsewhere never lock the real
 * user out; and per client address across every e-mail, against one address trying many accounts.
 */
export const SIGN_IN_FAILURES = {
  pair: { limit: 10, windowSeconds: 15 * 60, policy: "sign-in-failures" },
  address: { limit: 100, windowSeconds: 60 * 60, policy: "sign-in-address-failures" },
} as const;
