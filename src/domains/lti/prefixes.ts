/**
 * The paths this domain answers, as route-group prefixes (each path and everything below it): app.ts
 * routes a request to the group from these without loading the routes, and the route modules build
 * their paths from them, so the two cannot drift. No imports: a fresh isolate reads this file at start.
 */
export const LTI = "/api/lti";
export const LTI_CONSUMERS = "/api/integrations/lti-consumers";
export const LTI_LAUNCHES = "/api/integrations/lti-launches";
/** Deep linking's operations, under LTI (a launch's items, response and selection page). */
export const LTI_DEEP_LINKING = `${LTI}/deep-linking`;
export const PREFIXES = [LTI, LTI_CONSUMERS, LTI_LAUNCHES] as const;
