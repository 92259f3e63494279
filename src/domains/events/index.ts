import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { requireInstitution } from "../../platform/auth/principal";
import { paginate } from "../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../platform/openapi";
import { EVENTS } from "./prefixes";
import { EventIdParam, EventPageSchema, EventSchema, ListEventsQuery } from "./schemas";
import { getEvent, listEvents } from "./service";

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

export const getEventRoute = tokenRoute("events:read", {
  method: "get",
  path: `${EVENTS}/{id}`,
  tags: ["Events"],
  operationId: "getEvent",
  summary: "Get an event",
  description: "One event of the last 30 days, exactly as a webhook delivers it.",
  request: { params: EventIdParam },
  responses: { 200: jsonResponse(EventSchema, "The event.") },
});

export function registerEvents(app: OpenAPIHono<AppEnv>) {
  app.openapi(listEventsRoute, async (c) => {
    const { page, per_page, type, from, to } = c.req.valid("query");
    const { total, data } = await listEvents(
      c.env,
      requireInstitution(c.var.principal).id,
      { page, per_page },
      { type, from, to },
    );
    return c.json(paginate(c, { page, per_page }, total, data), 200);
  });

  app.openapi(getEventRoute, async (c) => {
    return c.json(
      await getEvent(c.env, requireInstitution(c.var.principal).id, c.req.valid("param").id),
      200,
    );
  });
}
