import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerAnalytics } from "./analytics";
import { registerCompliance } from "./compliance";
import { registerInstitutionRoutes } from "./routes/institutions";
import { registerSso } from "./sso";

/**
 * Institutions; analytics, SSO and compliance register themselves from their sub-folders. Members and
 * bulk provisioning are their own domain (domains/members), loaded in the same route group.
 */
export function registerInstitutions(app: OpenAPIHono<AppEnv>) {
  registerInstitutionRoutes(app);
  registerAnalytics(app);
  registerSso(app);
  registerCompliance(app);
}
