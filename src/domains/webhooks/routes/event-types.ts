import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../../env";
import { PageQuery, paginate } from "../../../platform/http/pagination";
import { jsonResponse, strictQueryOf, tokenRoute } from "../../../platform/openapi";
import { eventCatalogue } from "../catalogue";
import { EventTypePageSchema } from "../schemas";

export const listEventTypesRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: "/api/integrations/webhooks/event-types",
  tags: ["Webhooks"],
  operationId: "listWebhookEventTypes",
  summary: "List event types",
  description:
    "Every event type with a description and an example delivery body (`{ id, type, created_at, data }`), in catalogue order. `ping` is sent only by the test endpoint and cannot be subscribed to.",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(EventTypePageSchema, "The catalogue.") },
});

export const EVENT_TYPES_SEGMENT = "event-types";

/**
 * Documented as its own operation, but answered by `GET /api/integrations/webhooks/{id}` when `id`
 * is `event-types` (same ability): a static segment beside a parameter makes Hono fall back from its
 * RegExpRouter to the slower TrieRouter for every request of the API.
 */
export function registerEventTypes(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(listEventTypesRoute);
}

export function eventTypesPage(c: Context<AppEnv>) {
  const { page, per_page } = strictQueryOf(c, PageQuery);
  const all = eventCatalogue();
  return c.json(
    paginate(c, { page, per_page }, all.length, all.slice((page - 1) * per_page, page * per_page)),
    200,
  );
}
