import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { getDelivery } from "../delivery-service";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { DeliveryParams, DeliverySchema } from "../schemas";
import { findWebhook } from "../service";

const TAGS = ["Webhooks"];

export const getDeliveryRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: `${WEBHOOKS}/{id}/deliveries/{delivery}`,
  tags: TAGS,
  operationId: "getWebhookDelivery",
  summary: "Get a delivery",
  description: "One delivery with every attempt.",
  request: { params: DeliveryParams },
  responses: { 200: jsonResponse(DeliverySchema, "The delivery.") },
});

export function registerGetDelivery(app: OpenAPIHono<AppEnv>) {
  app.openapi(getDeliveryRoute, async (c) => {
    const ctx = principalContext(c);
    const { id, delivery } = c.req.valid("param");
    const webhook = await findWebhook(ctx, { ...webhookScope(ctx.principal), id });
    return c.json(await getDelivery(ctx, { webhookId: webhook.id, deliveryId: delivery }), 200);
  });
}
