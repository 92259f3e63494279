import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { PageQuery, paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { presentWebhook } from "../present";
import { WebhookPageSchema } from "../schemas";
import { listWebhooks } from "../service";

const TAGS = ["Webhooks"];

export const listWebhooksRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: WEBHOOKS,
  tags: TAGS,
  operationId: "listWebhooks",
  summary: "List webhooks",
  description: "The institution's webhooks, newest first (ties by id). Secrets are never listed.",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(WebhookPageSchema, "A page of webhooks.") },
});

export function registerListWebhooks(app: OpenAPIHono<AppEnv>) {
  app.openapi(listWebhooksRoute, async (c) => {
    const ctx = principalContext(c);
    const { page, per_page } = c.req.valid("query");
    const { total, rows } = await listWebhooks(ctx, {
      ...webhookScope(ctx.principal),
      page: { page, per_page },
    });
    return c.json(
      paginate(
        c,
        { page, per_page },
        total,
        rows.map((r) => presentWebhook(r, ctx.now())),
      ),
      200,
    );
  });
}
