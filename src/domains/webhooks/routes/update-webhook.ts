import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { presentWebhook } from "../present";
import { UpdateWebhookBody, WebhookIdParam, WebhookSchema } from "../schemas";
import { updateWebhook } from "../service";

const TAGS = ["Webhooks"];

export const updateWebhookRoute = tokenRoute("webhooks:write", {
  method: "put",
  path: `${WEBHOOKS}/{id}`,
  tags: TAGS,
  operationId: "updateWebhook",
  summary: "Update a webhook",
  description:
    "Changes any of `url`, `events`, `description`, `enabled`; fields left out keep their value. `enabled: true` re-enables a webhook that was switched off (by hand, for failures, or by a 410) and resets its failure count. Deliveries already queued keep going to the webhook.",
  request: { params: WebhookIdParam, body: jsonBody(UpdateWebhookBody) },
  responses: { 200: jsonResponse(WebhookSchema, "The updated webhook.") },
});

export function registerUpdateWebhook(app: OpenAPIHono<AppEnv>) {
  app.openapi(updateWebhookRoute, async (c) => {
    const ctx = principalContext(c);
    const row = await updateWebhook(ctx, {
      ...webhookScope(ctx.principal),
      id: c.req.valid("param").id,
      input: c.req.valid("json"),
    });
    return c.json(presentWebhook(row, ctx.now()), 200);
  });
}
