import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerAnalytics } from "./analytics";
import { registerCompliance } from "./compliance";
import { registerCreateInstitution } from "./routes/create-institution";
import { registerGetInstitution } from "./routes/get-institution";
import { registerGetInstitutionMove } from "./routes/get-institution-move";
import { registerListInstitutions } from "./routes/list-institutions";
import { registerStartInstitutionMove } from "./routes/start-institution-move";
import { registerUpdateInstitution } from "./routes/update-institution";
import { registerSso } from "./sso";

/**
 * Institutions; analytics, SSO and compliance register themselves from their sub-folders. Members and
 * bulk provisioning are their own domain (domains/members), loaded in the same route group.
 */
export function registerInstitutions(app: OpenAPIHono<AppEnv>) {
  registerListInstitutions(app);
  registerCreateInstitution(app);
  registerGetInstitution(app);
  registerUpdateInstitution(app);
  registerStartInstitutionMove(app);
  registerGetInstitutionMove(app);
  registerAnalytics(app);
  registerSso(app);
  registerCompliance(app);
}
