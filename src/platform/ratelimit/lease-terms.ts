// The terms of a lease of an institution's budget, shared by the object that grants it and the token
// gates and middleware that ask for it. A leaf module: the middleware imports it without pulling in
// the Durable Object class (and `cloudflare:workers`), so the app also loads outside workerd.

/**
 * What a token gate sends back of a lease it no longer needs: `units` granted at `second`, counted
 * against the institution and, when `userId` is set, against that user's share.
 */
export interface LeaseReturn {
  second: number;
  units: number;
  userId?: string;
}

/** The user whose share of the budget a lease also counts against: all their tokens together. */
export interface LeaseUser {
  id: string;
  /** Requests per window for all of the user's tokens together. */
  limit: number;
}

/** The policy names of the two limits a lease is counted against, as the RateLimit headers show them. */
export const INSTITUTION_POLICY = "institution";
export const USER_SHARE_POLICY = "user";
export type LeasePolicy = typeof INSTITUTION_POLICY | typeof USER_SHARE_POLICY;

/**
 * A lease of the institution's budget: `granted` requests counted at `second` (0 when the budget or
 * the user's share is spent), with the figures of the window that decided, for the headers of a
 * refusal: the institution's, or the user's share when that is what ran out (`policy`).
 */
export interface LeaseGrant {
  granted: number;
  second: number;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
  windowSeconds: number;
  /** Absent in answers of objects deployed before the user's share: the institution's. */
  policy?: LeasePolicy;
  /**
   * With a grant counted against a user's share: that window's figures after the grant, from which
   * the gate tells the client when the share is the limit closer to running out.
   */
  share?: { limit: number; remaining: number; resetSeconds: number };
}
