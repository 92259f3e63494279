import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { redeliver } from "../delivery-service";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { DeliveryParams, DeliverySchema } from "../schemas";
import { findWebhook } from "../service";

const TAGS = ["Webhooks"];

export const redeliverRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: `${WEBHOOKS}/{id}/deliveries/{delivery}/redeliver`,
  tags: TAGS,
  operationId: "redeliverWebhookDelivery",
  summary: "Redeliver a delivery",
  description:
    "Queues a new delivery of the same event: the same body (same event `id`, so a receiver that de-duplicates by it can), a new delivery id, the usual retries. The delivery must have finished (409 while pending or retrying) and the webhook be enabled (409).",
  middleware: [idempotent],
  request: { params: DeliveryParams, headers: z.object(idempotencyHeaderShape) },
  responses: { 202: jsonResponse(DeliverySchema, "The new delivery, queued.") },
});

export function registerRedeliver(app: OpenAPIHono<AppEnv>) {
  app.openapi(redeliverRoute, async (c) => {
    const ctx = principalContext(c);
    const { id, delivery } = c.req.valid("param");
    const webhook = await findWebhook(ctx, { ...webhookScope(ctx.principal), id });
    const created = await redeliver(ctx, { webhook, deliveryId: delivery });
    c.header("Location", new URL(`${WEBHOOKS}/${webhook.id}/deliveries/${created.id}`, c.req.url).toString());
    return c.json(created, 202);
  });
}
