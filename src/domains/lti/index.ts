import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerConsumerRoutes } from "./routes/consumers";
import { registerKeyRoutes } from "./routes/keys";

export function registerLti(app: OpenAPIHono<AppEnv>) {
  registerKeyRoutes(app);
  registerConsumerRoutes(app);
}
