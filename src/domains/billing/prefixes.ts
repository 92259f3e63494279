/**
 * The paths this domain answers, as route-group prefixes (each path and everything below it): the
 * plans, the billing sessions, promotion codes, the subscription and Stripe's webhook, and the
 * trial's status. No imports: a fresh isolate reads this file at start.
 */
export const SUBSCRIPTION_PLANS = "/api/subscription-plans";
export const BILLING = "/api/billing";
export const TRIAL = "/api/trial";
export const PREFIXES = [SUBSCRIPTION_PLANS, BILLING, TRIAL] as const;
