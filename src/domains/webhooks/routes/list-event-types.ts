import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { PageQuery, paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { eventCatalogue } from "../catalogue";
import { WEBHOOKS } from "../prefixes";
import { EventTypePageSchema } from "../schemas";

export const listEventTypesRoute = tokenRoute("webhooks:read", {
  method: "get",
  path: `${WEBHOOKS}/event-types`,
  tags: ["Webhooks"],
  operationId: "listWebhookEventTypes",
  summary: "List event types",
  description:
    "Every event type with a description and an example delivery body (`{ id, type, created_at, data }`), in catalogue order. `ping` is sent only by the test endpoint and cannot be subscribed to.",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(EventTypePageSchema, "The catalogue.") },
});

/**
 * Registered before `GET /api/integrations/webhooks/{id}`, which would otherwise take `event-types`
 * for an id: the router answers the first route registered that matches. A static segment beside a
 * parameter moves this group's Hono from its RegExpRouter to its TrieRouter (under a microsecond a
 * request more, on this group only).
 */
export function registerEventTypes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listEventTypesRoute, (c) => {
    const { page, per_page } = c.req.valid("query");
    const all = eventCatalogue();
    return c.json(
      paginate(c, { page, per_page }, all.length, all.slice((page - 1) * per_page, page * per_page)),
      200,
    );
  });
}
