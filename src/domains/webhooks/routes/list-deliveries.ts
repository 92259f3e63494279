import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { listDeliveries } from "../delivery-service";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { DeliveryPageSchema, ListDeliveriesQuery, WebhookIdParam } from "../schemas";
import { findWebhook } from "../service";

const TAGS = ["Webhooks"];

export const listDeliveriesRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: `${WEBHOOKS}/{id}/deliveries`,
  tags: TAGS,
  operationId: "listWebhookDeliveries",
  summary: "List a webhook's deliveries",
  description: "The delivery log, newest first (ties by id), each with every attempt. Kept for 30 days.",
  request: { params: WebhookIdParam, query: ListDeliveriesQuery },
  responses: { 200: jsonResponse(DeliveryPageSchema, "A page of deliveries.") },
});

export function registerListDeliveries(app: OpenAPIHono<AppEnv>) {
  app.openapi(listDeliveriesRoute, async (c) => {
    const ctx = principalContext(c);
    const webhook = await findWebhook(ctx, { ...webhookScope(ctx.principal), id: c.req.valid("param").id });
    const { page, per_page, status, event } = c.req.valid("query");
    const { total, data } = await listDeliveries(ctx, {
      webhookId: webhook.id,
      page: { page, per_page },
      filters: { status, event },
    });
    return c.json(paginate(c, { page, per_page }, total, data), 200);
  });
}
