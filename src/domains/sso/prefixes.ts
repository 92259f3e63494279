/**
 * The paths of SSO sign-in. No prefixes of its own: `/api/auth/sso/…` is below the auth group's
 * `/api/auth` and the SSO log below institutions' `/api/institutions`, so app.ts loads this domain's
 * sign-in routes with auth and its log with institutions. Spelt here so that sso imports neither's
 * prefixes module. No imports: a fresh isolate reads this file at start.
 */
export const AUTH_SSO = "/api/auth/sso";
export const INSTITUTIONS = "/api/institutions";
/** Where a browser lands after a sign-in, the code in its fragment: the dashboard's SSO page. */
export const LANDING_PATH = "/dashboard/sso";
export const PREFIXES = [] as const;
