import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerLaunchRoutes } from "./launch/routes/launch";
import { registerLaunchLogRoutes } from "./launch/routes/launch-log";
import { registerKeyRoutes } from "./registrations/routes/keys";
import { registerConsumerRoutes } from "./registrations/routes/registrations";
import { registerPassbackRoutes } from "./routes/passback";

export function registerLti(app: OpenAPIHono<AppEnv>) {
  registerKeyRoutes(app);
  registerConsumerRoutes(app);
  registerLaunchRoutes(app);
  registerLaunchLogRoutes(app);
  registerPassbackRoutes(app);
}
