import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { eventScope } from "../policy";
import { EVENTS } from "../prefixes";
import { EventIdParam, EventSchema } from "../schemas";
import { getEvent } from "../service";

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

export function registerGetEvent(app: OpenAPIHono<AppEnv>) {
  app.openapi(getEventRoute, async (c) => {
    const ctx = principalContext(c);
    const event = await getEvent(ctx, {
      ...eventScope(ctx.principal),
      id: c.req.valid("param").id,
    });
    return c.json(event, 200);
  });
}
