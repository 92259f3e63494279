import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerGradePassback as registerPassbackRoutes } from "./grades/routes/grade-passback";
import { registerConsumerRoutes } from "./routes/consumers";
import { registerKeyRoutes } from "./routes/keys";
import { registerLaunchRoutes } from "./routes/launch";
import { registerLaunchLogRoutes } from "./routes/launches";

export function registerLti(app: OpenAPIHono<AppEnv>) {
  registerKeyRoutes(app);
  registerConsumerRoutes(app);
  registerLaunchRoutes(app);
  registerLaunchLogRoutes(app);
  registerPassbackRoutes(app);
}
