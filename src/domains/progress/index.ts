import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerRecordAttempts } from "./routes/record-attempts";

export function registerProgress(app: OpenAPIHono<AppEnv>) {
  registerRecordAttempts(app);
}
