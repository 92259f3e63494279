/**
 * The paths this domain answers, as route-group prefixes (each path and everything below it), read by
 * app.ts without loading the routes. No imports: a fresh isolate reads this file at start.
 *
 * None of its own: members are answered below their institution's path (`/api/institutions/{id}/members`,
 * `…/members/bulk`, `…/invitations`), which institutions' prefixes.ts claims, so the institutions
 * route group loads both domains (app.ts). `INSTITUTIONS` is the same path as institutions'
 * `INSTITUTIONS`, spelt here so that members import nothing of institutions; a member route outside the
 * group's prefixes fails the routing test (test/system/openapi.test.ts).
 */
export const INSTITUTIONS = "/api/institutions";
export const PREFIXES = [] as const;
