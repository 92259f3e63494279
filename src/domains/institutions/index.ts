import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerCompliance } from "./compliance";

export function registerInstitutions(app: OpenAPIHono<AppEnv>) {
  registerCompliance(app);
}
