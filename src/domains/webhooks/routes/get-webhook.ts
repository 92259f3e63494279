import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { presentWebhook } from "../present";
import { WebhookIdParam, WebhookWithHealthSchema } from "../schemas";
import { findWebhook, webhookHealth } from "../service";

const TAGS = ["Webhooks"];

export const getWebhookRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: `${WEBHOOKS}/{id}`,
  tags: TAGS,
  operationId: "getWebhook",
  summary: "Get a webhook and its health",
  description:
    "The webhook and its deliveries of the last 24 hours: counts by outcome, success rate, latest success and failure.",
  request: { params: WebhookIdParam },
  responses: { 200: jsonResponse(WebhookWithHealthSchema, "The webhook.") },
});

export function registerGetWebhook(app: OpenAPIHono<AppEnv>) {
  app.openapi(getWebhookRoute, async (c) => {
    const ctx = principalContext(c);
    const row = await findWebhook(ctx, { ...webhookScope(ctx.principal), id: c.req.valid("param").id });
    return c.json({ ...presentWebhook(row, ctx.now()), health: await webhookHealth(ctx, row.id) }, 200);
  });
}
