import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { xapiScope } from "../../policy";
import { XAPI_ENDPOINTS } from "../../prefixes";
import { XapiEndpointIdParam } from "../../schemas";
import { presentBackfill } from "../present";
import { CreateBackfillBody, XapiBackfillSchema } from "../schemas";
import { startBackfill } from "../service";

const TAGS = ["xAPI"];

export const startXapiBackfillRoute = tokenRoute("xapi:write", {
  method: "post",
  path: `${XAPI_ENDPOINTS}/{id}/backfill`,
  tags: TAGS,
  operationId: "startXapiBackfill",
  summary: "Back-fill an endpoint",
  description:
    "Forwards what the endpoint missed between `since` (at most 90 days ago) and now — a new LRS, an outage, a time it was disabled — through the same queue as live statements, never sending a statement id twice: the members' attempts, lesson progress and completions, course completions and achievements, CEFR levels mastered within the last 30 days, and the endpoint's failed statements that the LRS did not reject itself. Answers `202` with the back-fill, which runs in the background: watch it with `GET …/backfills/{backfill}` (the `Location`). The endpoint must be enabled (409 `xapi_endpoint_disabled`), and one back-fill runs at a time per endpoint (409 `xapi_backfill_in_progress`).",
  middleware: [idempotent],
  request: {
    params: XapiEndpointIdParam,
    headers: z.object(idempotencyHeaderShape),
    body: jsonBody(CreateBackfillBody),
  },
  responses: {
    202: {
      ...jsonResponse(XapiBackfillSchema, "Accepted: the back-fill, `queued`."),
      headers: { Location: { description: "The back-fill's URL.", schema: { type: "string" } } },
    },
    409: {
      ...errorResponses[409],
      description:
        "`xapi_endpoint_disabled`: the endpoint is disabled. `xapi_backfill_in_progress`: another back-fill of it is queued or running (`backfill_id` names it). `idempotency_in_flight`: a request with this Idempotency-Key is still in flight.",
    },
  },
});

export function registerStartXapiBackfill(app: OpenAPIHono<AppEnv>) {
  app.openapi(startXapiBackfillRoute, async (c) => {
    const ctx = principalContext(c);
    const row = await startBackfill(ctx, {
      ...xapiScope(ctx.principal),
      endpointId: c.req.valid("param").id,
      userId: ctx.principal.user.id,
      body: c.req.valid("json"),
    });
    c.header(
      "Location",
      new URL(`${XAPI_ENDPOINTS}/${row.endpointId}/backfills/${row.id}`, c.req.url).toString(),
    );
    return c.json(presentBackfill(row), 202);
  });
}
