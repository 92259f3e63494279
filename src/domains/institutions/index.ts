import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerAnalytics } from "./analytics";
import { registerCompliance } from "./compliance";
import { registerBulkRoutes } from "./routes/bulk";
import { registerCreateInstitution } from "./routes/create-institution";
import { registerGetInstitution } from "./routes/get-institution";
import { registerListInstitutions } from "./routes/list-institutions";
import { registerMemberRoutes } from "./routes/members";
import { registerUpdateInstitution } from "./routes/update-institution";
import { registerSso } from "./sso";

/**
 * Institutions, members and bulk provisioning; analytics, SSO and compliance register themselves from
 * their sub-folders. Bulk routes come before the member routes: `/members/bulk` is not a member id.
 */
export function registerInstitutions(app: OpenAPIHono<AppEnv>) {
  registerListInstitutions(app);
  registerCreateInstitution(app);
  registerGetInstitution(app);
  registerUpdateInstitution(app);
  registerBulkRoutes(app);
  registerMemberRoutes(app);
  registerAnalytics(app);
  registerSso(app);
  registerCompliance(app);
}
