import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { registerGetAnalytics } from "./routes/get-analytics";

export function registerAnalytics(app: OpenAPIHono<AppEnv>) {
  registerGetAnalytics(app);
}
