/**
 * The paths this domain answers, as route-group prefixes (each path and everything below it), read by
 * app.ts without loading the routes. No imports: a fresh isolate reads this file at start.
 *
 * None of its own: members are answered below institutions' `/api/institutions/{id}/…` (`/members`,
 * `/members/bulk`, `/invitations`), so the institutions route group holds both domains, and the
 * member routes build their paths from institutions' `INSTITUTIONS` (a face: prefixes.ts).
 */
export const PREFIXES = [] as const;
