import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerAnalytics } from "./analytics";
import { registerCompliance } from "./compliance";
import { registerSso } from "./sso";

export function registerInstitutions(app: OpenAPIHono<AppEnv>) {
  registerAnalytics(app);
  registerSso(app);
  registerCompliance(app);
}
