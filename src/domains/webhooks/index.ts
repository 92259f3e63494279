import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerWebhookDocs } from "./openapi-webhooks";
import { registerWebhookActions } from "./routes/actions";
import { registerDeliveryRoutes } from "./routes/deliveries";
import { registerEventTypes } from "./routes/event-types";
import { registerWebhookRoutes } from "./routes/webhooks";

export function registerWebhooks(app: OpenAPIHono<AppEnv>) {
  registerEventTypes(app);
  registerWebhookRoutes(app);
  registerWebhookActions(app);
  registerDeliveryRoutes(app);
  registerWebhookDocs(app);
}
