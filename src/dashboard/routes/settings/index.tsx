import type { Hono } from "hono";
import type { AppEnv } from "../../../env";
import { registerGeneralSettings } from "./general";
import { registerSsoSettings } from "./sso-edit";

/**
 * Institution settings: name, branding, locale and time zone (`PATCH /api/institutions/{id}`'s
 * service and rules); SSO settings — the summary, the values for the IdP, the domains and their DNS
 * records, and the edit (`PUT …/sso`, `POST …/sso/domains/{domain}/verify`); compliance documents.
 */
export function registerSettings(app: Hono<AppEnv>) {
  registerGeneralSettings(app);
  registerSsoSettings(app);
}
