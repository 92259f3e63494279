/**
 * The paths this domain answers, read by app.ts without loading the routes. No imports: a fresh
 * isolate reads this file at start.
 *
 * The SCIM 2.0 service (RFC 7644) an identity provider calls with a SCIM token: its own route group,
 * outside `/api` and outside the OpenAPI document (docs/design/scim.md says why).
 */
export const SCIM_BASE = "/scim/v2";
/** The SCIM service's group (app.ts's SCIM_GROUP), not among the documented route groups. */
export const SCIM_PREFIXES = [SCIM_BASE] as const;
/** The documented routes' own prefixes: none (see INSTITUTIONS). */
export const PREFIXES = [] as const;
/**
 * The SCIM tokens and settings are below their institution (`/api/institutions/{id}/scim-tokens`,
 * `…/scim`), which institutions' prefixes.ts claims: the institutions route group loads their routes
 * (app.ts). Spelt here so that this file imports nothing.
 */
export const INSTITUTIONS = "/api/institutions";
