import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { presentWebhook } from "../present";
import { CreateWebhookBody, WebhookWithSecretSchema } from "../schemas";
import { createWebhook } from "../service";

const TAGS = ["Webhooks"];

export const createWebhookRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: WEBHOOKS,
  tags: TAGS,
  operationId: "createWebhook",
  summary: "Create a webhook",
  description:
    "Subscribes a URL to event types. The signing `secret` (`whsec_…`) is in this response only; it is stored encrypted. Send a test ping (`POST …/{id}/test`) to check the receiver. At most 20 webhooks per institution (409 beyond).",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateWebhookBody) },
  responses: { 201: jsonResponse(WebhookWithSecretSchema, "The webhook, with its secret.") },
});

export function registerCreateWebhook(app: OpenAPIHono<AppEnv>) {
  app.openapi(createWebhookRoute, async (c) => {
    const ctx = principalContext(c);
    const { row, secret } = await createWebhook(ctx, {
      owner: { ...webhookScope(ctx.principal), userId: ctx.principal.user.id },
      input: c.req.valid("json"),
    });
    c.header("Location", new URL(`${WEBHOOKS}/${row.id}`, c.req.url).toString());
    return c.json({ ...presentWebhook(row, ctx.now()), secret }, 201);
  });
}
