import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { tokenRoute } from "../../../platform/openapi";
import { xapiScope } from "../policy";
import { XAPI_ENDPOINTS } from "../prefixes";
import { XapiEndpointIdParam } from "../schemas";
import { deleteEndpoint } from "../service";

const TAGS = ["xAPI"];

export const deleteXapiEndpointRoute = tokenRoute("xapi:write", {
  method: "delete",
  path: `${XAPI_ENDPOINTS}/{id}`,
  tags: TAGS,
  operationId: "deleteXapiEndpoint",
  summary: "Delete a Learning Record Store",
  description:
    "Stops forwarding at once and deletes the endpoint with its forwarding log: statements still pending for it are dropped, never sent. What the LRS already stored stays there.",
  request: { params: XapiEndpointIdParam },
  responses: { 204: { description: "Deleted." } },
});

export function registerDeleteXapiEndpoint(app: OpenAPIHono<AppEnv>) {
  app.openapi(deleteXapiEndpointRoute, async (c) => {
    const ctx = principalContext(c);
    await deleteEndpoint(ctx, { ...xapiScope(ctx.principal), id: c.req.valid("param").id });
    return c.body(null, 204);
  });
}
