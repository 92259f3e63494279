/**
 * The paths the admin dashboard answers (a route group of its own in app.ts, outside the OpenAPI
 * document). No imports: app.ts reads this file at start without loading a page.
 */
export const DASHBOARD = "/dashboard";
export const PREFIXES = [DASHBOARD] as const;

export const SIGN_IN_PATH = `${DASHBOARD}/sign-in`;
export const SIGN_OUT_PATH = `${DASHBOARD}/sign-out`;
/** Where an invitation URL points: the person chooses a password here. */
export const ACCEPT_INVITATION_PATH = `${DASHBOARD}/accept-invitation`;
export const INSTITUTIONS_PATH = `${DASHBOARD}/institutions`;
export const TOKENS_PATH = `${DASHBOARD}/settings/integrations/tokens`;
export const WEBHOOKS_PATH = `${DASHBOARD}/settings/integrations/webhooks`;
export const EXPORTS_PATH = `${DASHBOARD}/settings/integrations/exports`;
export const ANALYTICS_PATH = `${DASHBOARD}/analytics`;
export const BILLING_PATH = `${DASHBOARD}/settings/billing`;
export const INSTITUTION_SETTINGS_PATH = `${DASHBOARD}/settings/institution`;
export const ASSETS_PATH = `${DASHBOARD}/assets`;
export const MEMBERS_PATH = `${DASHBOARD}/members`;
export const MEMBERS_BULK_PATH = `${MEMBERS_PATH}/bulk`;
export const LTI_PATH = `${DASHBOARD}/settings/integrations/lti`;
export const XAPI_PATH = `${DASHBOARD}/settings/integrations/xapi`;
