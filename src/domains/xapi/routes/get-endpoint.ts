import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { healthOf } from "../health";
import { xapiScope } from "../policy";
import { XAPI_ENDPOINTS } from "../prefixes";
import { presentEndpoint } from "../present";
import { XapiEndpointIdParam, XapiEndpointSchema } from "../schemas";
import { findEndpoint } from "../service";

const TAGS = ["xAPI"];

export const getXapiEndpointRoute = tokenRoute("xapi:read", {
  method: "get",
  path: `${XAPI_ENDPOINTS}/{id}`,
  tags: TAGS,
  operationId: "getXapiEndpoint",
  summary: "Get a Learning Record Store",
  description:
    "The endpoint with its `health`: statements sent and failed over the last 24 hours, those pending, the last success and the last error.",
  request: { params: XapiEndpointIdParam },
  responses: { 200: jsonResponse(XapiEndpointSchema, "The endpoint.") },
});

export function registerGetXapiEndpoint(app: OpenAPIHono<AppEnv>) {
  app.openapi(getXapiEndpointRoute, async (c) => {
    const ctx = principalContext(c);
    const row = await findEndpoint(ctx, { ...xapiScope(ctx.principal), id: c.req.valid("param").id });
    return c.json(presentEndpoint(row, await healthOf(ctx, row.id)), 200);
  });
}
