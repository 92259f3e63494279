import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { tokenRoute } from "../../../platform/openapi";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { WebhookIdParam } from "../schemas";
import { deleteWebhook } from "../service";

const TAGS = ["Webhooks"];

export const deleteWebhookRoute = tokenRoute("webhooks:write", {
  method: "delete",
  path: `${WEBHOOKS}/{id}`,
  tags: TAGS,
  operationId: "deleteWebhook",
  summary: "Delete a webhook",
  description: "Deletes the webhook and its delivery log; queued deliveries are dropped, never sent.",
  request: { params: WebhookIdParam },
  responses: { 204: { description: "Deleted." } },
});

export function registerDeleteWebhook(app: OpenAPIHono<AppEnv>) {
  app.openapi(deleteWebhookRoute, async (c) => {
    const ctx = principalContext(c);
    await deleteWebhook(ctx, { ...webhookScope(ctx.principal), id: c.req.valid("param").id });
    return c.body(null, 204);
  });
}
