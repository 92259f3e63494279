import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { xapiScope } from "../../policy";
import { XAPI_ENDPOINTS } from "../../prefixes";
import { findEndpoint } from "../../service";
import { presentBackfill } from "../present";
import { XapiBackfillParams, XapiBackfillSchema } from "../schemas";
import { getBackfill } from "../service";

const TAGS = ["xAPI"];

export const getXapiBackfillRoute = tokenRoute("xapi:read", {
  method: "get",
  path: `${XAPI_ENDPOINTS}/{id}/backfills/{backfill}`,
  tags: TAGS,
  operationId: "getXapiBackfill",
  summary: "A back-fill",
  description:
    "One back-fill of this endpoint: its window, its status (`queued`, `running`, `completed`, `failed`) and how many statements it queued so far.",
  request: { params: XapiBackfillParams },
  responses: { 200: jsonResponse(XapiBackfillSchema, "The back-fill.") },
});

export function registerGetXapiBackfill(app: OpenAPIHono<AppEnv>) {
  app.openapi(getXapiBackfillRoute, async (c) => {
    const ctx = principalContext(c);
    const params = c.req.valid("param");
    const endpoint = await findEndpoint(ctx, { ...xapiScope(ctx.principal), id: params.id });
    return c.json(
      presentBackfill(await getBackfill(ctx, { endpointId: endpoint.id, id: params.backfill })),
      200,
    );
  });
}
