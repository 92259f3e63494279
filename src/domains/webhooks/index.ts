import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerWebhookDocs } from "./openapi-webhooks";
import { registerCreateWebhook } from "./routes/create-webhook";
import { registerDeleteWebhook } from "./routes/delete-webhook";
import { registerGetDelivery } from "./routes/get-delivery";
import { registerGetWebhook } from "./routes/get-webhook";
import { registerListDeliveries } from "./routes/list-deliveries";
import { registerEventTypes } from "./routes/list-event-types";
import { registerListWebhooks } from "./routes/list-webhooks";
import { registerRecover } from "./routes/recover";
import { registerRedeliver } from "./routes/redeliver";
import { registerRotateSecret } from "./routes/rotate-secret";
import { registerTestWebhook } from "./routes/test-webhook";
import { registerUpdateWebhook } from "./routes/update-webhook";

/** The order is the router's: `event-types` before `{id}`, which would otherwise take it for an id. */
export function registerWebhooks(app: OpenAPIHono<AppEnv>) {
  registerEventTypes(app);
  registerListWebhooks(app);
  registerCreateWebhook(app);
  registerGetWebhook(app);
  registerUpdateWebhook(app);
  registerDeleteWebhook(app);
  registerTestWebhook(app);
  registerRotateSecret(app);
  registerListDeliveries(app);
  registerGetDelivery(app);
  registerRedeliver(app);
  registerRecover(app);
  registerWebhookDocs(app);
}
