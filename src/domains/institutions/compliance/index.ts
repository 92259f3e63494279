import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { registerGetCompliance } from "./routes/get-compliance";
import { registerPutComplianceDocument } from "./routes/put-compliance-document";

export function registerCompliance(app: OpenAPIHono<AppEnv>) {
  registerGetCompliance(app);
  registerPutComplianceDocument(app);
}
