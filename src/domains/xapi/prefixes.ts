/**
 * The paths this domain answers, as route-group prefixes (each path and everything below it): the
 * endpoints' API, and the Lingua xAPI profile that the IRIs of every forwarded statement resolve to.
 * No imports: a fresh isolate reads this file at start.
 */
export const XAPI_ENDPOINTS = "/api/integrations/xapi-endpoints";
export const XAPI_PROFILE = "/xapi/profile";
export const PREFIXES = [XAPI_ENDPOINTS, XAPI_PROFILE] as const;
