import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { recover } from "../delivery-service";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { RecoverBody, RecoverResponse, WebhookIdParam } from "../schemas";
import { findWebhook } from "../service";

const TAGS = ["Webhooks"];

export const recoverRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: `${WEBHOOKS}/{id}/recover`,
  tags: TAGS,
  operationId: "recoverWebhook",
  summary: "Redeliver every failed delivery since a time",
  description:
    "For each event whose latest delivery to this webhook ended `failed` since `since`, queues one new delivery — after an outage of your receiver, one call catches up. Up to 1,000 per call (`has_more` says to call again). The webhook must be enabled (409).",
  middleware: [idempotent],
  request: { params: WebhookIdParam, headers: z.object(idempotencyHeaderShape), body: jsonBody(RecoverBody) },
  responses: { 202: jsonResponse(RecoverResponse, "What was queued.") },
});

export function registerRecover(app: OpenAPIHono<AppEnv>) {
  app.openapi(recoverRoute, async (c) => {
    const ctx = principalContext(c);
    const webhook = await findWebhook(ctx, { ...webhookScope(ctx.principal), id: c.req.valid("param").id });
    return c.json(await recover(ctx, { webhook, since: c.req.valid("json").since }), 202);
  });
}
