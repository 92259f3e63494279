import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { eventScope } from "../policy";
import { EVENTS } from "../prefixes";
import { EventPageSchema, ListEventsQuery } from "../schemas";
import { listEvents } from "../service";

export const listEventsRoute = tokenRoute("events:read", {
  method: "get",
  path: EVENTS,
  tags: ["Events"],
  operationId: "listEvents",
  summary: "List events",
  description:
    "The institution's events of the last 30 days, newest first (ties by id), whether or not a webhook was subscribed: compare with what your receiver got to find what it missed, then fetch or redeliver. Test pings are not listed.",
  request: { query: ListEventsQuery },
  responses: { 200: jsonResponse(EventPageSchema, "A page of events.") },
});

export function registerListEvents(app: OpenAPIHono<AppEnv>) {
  app.openapi(listEventsRoute, async (c) => {
    const ctx = principalContext(c);
    const { page, per_page, type, from, to } = c.req.valid("query");
    const { total, data } = await listEvents(ctx, {
      ...eventScope(ctx.principal),
      page: { page, per_page },
      filters: { type, from, to },
    });
    return c.json(paginate(c, { page, per_page }, total, data), 200);
  });
}
