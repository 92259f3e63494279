import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { requireInstitution } from "../../../platform/auth/principal";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { PageQuery, paginate } from "../../../platform/http/pagination";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { presentWebhook } from "../present";
import {
  CreateWebhookBody,
  UpdateWebhookBody,
  WebhookIdParam,
  WebhookPageSchema,
  WebhookSchema,
  WebhookWithHealthSchema,
  WebhookWithSecretSchema,
} from "../schemas";
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhooks,
  updateWebhook,
  webhookHealth,
} from "../service";

const TAGS = ["Webhooks"];

export const listWebhooksRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: "/api/integrations/webhooks",
  tags: TAGS,
  operationId: "listWebhooks",
  summary: "List webhooks",
  description: "The institution's webhooks, newest first (ties by id). Secrets are never listed.",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(WebhookPageSchema, "A page of webhooks.") },
});

export const createWebhookRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: "/api/integrations/webhooks",
  tags: TAGS,
  operationId: "createWebhook",
  summary: "Create a webhook",
  description:
    "Subscribes a URL to event types. The signing `secret` (`whsec_…`) is in this response only; it is stored encrypted. Send a test ping (`POST …/{id}/test`) to check the receiver. At most 20 webhooks per institution (409 beyond).",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateWebhookBody) },
  responses: { 201: jsonResponse(WebhookWithSecretSchema, "The webhook, with its secret.") },
});

export const getWebhookRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: "/api/integrations/webhooks/{id}",
  tags: TAGS,
  operationId: "getWebhook",
  summary: "Get a webhook and its health",
  description:
    "The webhook and its deliveries of the last 24 hours: counts by outcome, success rate, latest success and failure.",
  request: { params: WebhookIdParam },
  responses: { 200: jsonResponse(WebhookWithHealthSchema, "The webhook.") },
});

export const updateWebhookRoute = tokenRoute("webhooks:write", {
  method: "put",
  path: "/api/integrations/webhooks/{id}",
  tags: TAGS,
  operationId: "updateWebhook",
  summary: "Update a webhook",
  description:
    "Changes any of `url`, `events`, `description`, `enabled`; fields left out keep their value. `enabled: true` re-enables a webhook that was switched off (by hand, for failures, or by a 410) and resets its failure count. Deliveries already queued keep going to the webhook.",
  request: { params: WebhookIdParam, body: jsonBody(UpdateWebhookBody) },
  responses: { 200: jsonResponse(WebhookSchema, "The updated webhook.") },
});

export const deleteWebhookRoute = tokenRoute("webhooks:write", {
  method: "delete",
  path: "/api/integrations/webhooks/{id}",
  tags: TAGS,
  operationId: "deleteWebhook",
  summary: "Delete a webhook",
  description: "Deletes the webhook and its delivery log; queued deliveries are dropped, never sent.",
  request: { params: WebhookIdParam },
  responses: { 204: { description: "Deleted." } },
});

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listWebhooksRoute, async (c) => {
    const { page, per_page } = c.req.valid("query");
    const { total, rows } = await listWebhooks(c.env, requireInstitution(c.var.principal).id, {
      page,
      per_page,
    });
    return c.json(
      paginate(
        c,
        { page, per_page },
        total,
        rows.map((r) => presentWebhook(r)),
      ),
      200,
    );
  });

  app.openapi(createWebhookRoute, async (c) => {
    const principal = c.var.principal;
    const { row, secret } = await createWebhook(
      c.env,
      { institutionId: requireInstitution(principal).id, userId: principal.user.id },
      c.req.valid("json"),
    );
    c.header("Location", new URL(`/api/integrations/webhooks/${row.id}`, c.req.url).toString());
    return c.json({ ...presentWebhook(row), secret }, 201);
  });

  app.openapi(getWebhookRoute, async (c) => {
    const row = await findWebhook(c.env, requireInstitution(c.var.principal).id, c.req.valid("param").id);
    return c.json({ ...presentWebhook(row), health: await webhookHealth(c.env, row.id) }, 200);
  });

  app.openapi(updateWebhookRoute, async (c) => {
    const row = await updateWebhook(
      c.env,
      requireInstitution(c.var.principal).id,
      c.req.valid("param").id,
      c.req.valid("json"),
    );
    return c.json(presentWebhook(row), 200);
  });

  app.openapi(deleteWebhookRoute, async (c) => {
    await deleteWebhook(c.env, requireInstitution(c.var.principal).id, c.req.valid("param").id);
    return c.body(null, 204);
  });
}
