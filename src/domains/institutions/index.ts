import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerAnalytics } from "./analytics";
import { registerCompliance } from "./compliance";
import { registerBulkRoutes } from "./routes/bulk";
import { registerInstitutionRoutes } from "./routes/institutions";
import { registerMemberRoutes } from "./routes/members";
import { registerSso } from "./sso";

/**
 * Institutions, members and bulk provisioning; analytics, SSO and compliance register themselves from
 * their sub-folders. Bulk routes come before the member routes: `/members/bulk` is not a member id.
 */
export function registerInstitutions(app: OpenAPIHono<AppEnv>) {
  registerInstitutionRoutes(app);
  registerBulkRoutes(app);
  registerMemberRoutes(app);
  registerAnalytics(app);
  registerSso(app);
  registerCompliance(app);
}
