import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { requireInstitution } from "../../../platform/auth/principal";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { paginate } from "../../../platform/http/pagination";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { getDelivery, listDeliveries, recover, redeliver } from "../delivery-service";
import {
  DeliveryPageSchema,
  DeliveryParams,
  DeliverySchema,
  ListDeliveriesQuery,
  RecoverBody,
  RecoverResponse,
  WebhookIdParam,
} from "../schemas";
import { findWebhook } from "../service";

const TAGS = ["Webhooks"];

export const listDeliveriesRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: "/api/integrations/webhooks/{id}/deliveries",
  tags: TAGS,
  operationId: "listWebhookDeliveries",
  summary: "List a webhook's deliveries",
  description: "The delivery log, newest first (ties by id), each with every attempt. Kept for 30 days.",
  request: { params: WebhookIdParam, query: ListDeliveriesQuery },
  responses: { 200: jsonResponse(DeliveryPageSchema, "A page of deliveries.") },
});

export const getDeliveryRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: "/api/integrations/webhooks/{id}/deliveries/{delivery}",
  tags: TAGS,
  operationId: "getWebhookDelivery",
  summary: "Get a delivery",
  description: "One delivery with every attempt.",
  request: { params: DeliveryParams },
  responses: { 200: jsonResponse(DeliverySchema, "The delivery.") },
});

export const redeliverRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: "/api/integrations/webhooks/{id}/deliveries/{delivery}/redeliver",
  tags: TAGS,
  operationId: "redeliverWebhookDelivery",
  summary: "Redeliver a delivery",
  description:
    "Queues a new delivery of the same event: the same body (same event `id`, so a receiver that de-duplicates by it can), a new delivery id, the usual retries. The delivery must have finished (409 while pending or retrying) and the webhook be enabled (409).",
  middleware: [idempotent],
  request: { params: DeliveryParams, headers: z.object(idempotencyHeaderShape) },
  responses: { 202: jsonResponse(DeliverySchema, "The new delivery, queued.") },
});

export const recoverRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: "/api/integrations/webhooks/{id}/recover",
  tags: TAGS,
  operationId: "recoverWebhook",
  summary: "Redeliver every failed delivery since a time",
  description:
    "For each event whose latest delivery to this webhook ended `failed` since `since`, queues one new delivery — after an outage of your receiver, one call catches up. Up to 1,000 per call (`has_more` says to call again). The webhook must be enabled (409).",
  middleware: [idempotent],
  request: { params: WebhookIdParam, headers: z.object(idempotencyHeaderShape), body: jsonBody(RecoverBody) },
  responses: { 202: jsonResponse(RecoverResponse, "What was queued.") },
});

export function registerDeliveryRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listDeliveriesRoute, async (c) => {
    const webhook = await findWebhook(c.env, requireInstitution(c.var.principal).id, c.req.valid("param").id);
    const { page, per_page, status, event } = c.req.valid("query");
    const { total, data } = await listDeliveries(c.env, webhook.id, { page, per_page }, { status, event });
    return c.json(paginate(c, { page, per_page }, total, data), 200);
  });

  app.openapi(getDeliveryRoute, async (c) => {
    const { id, delivery } = c.req.valid("param");
    const webhook = await findWebhook(c.env, requireInstitution(c.var.principal).id, id);
    return c.json(await getDelivery(c.env, webhook.id, delivery), 200);
  });

  app.openapi(redeliverRoute, async (c) => {
    const { id, delivery } = c.req.valid("param");
    const webhook = await findWebhook(c.env, requireInstitution(c.var.principal).id, id);
    const created = await redeliver(principalContext(c), { webhook, deliveryId: delivery });
    c.header(
      "Location",
      new URL(`/api/integrations/webhooks/${webhook.id}/deliveries/${created.id}`, c.req.url).toString(),
    );
    return c.json(created, 202);
  });

  app.openapi(recoverRoute, async (c) => {
    const webhook = await findWebhook(c.env, requireInstitution(c.var.principal).id, c.req.valid("param").id);
    return c.json(await recover(principalContext(c), { webhook, since: c.req.valid("json").since }), 202);
  });
}
