import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerCompliance } from "./compliance";
import { registerSso } from "./sso";

export function registerInstitutions(app: OpenAPIHono<AppEnv>) {
  registerSso(app);
  registerCompliance(app);
}
