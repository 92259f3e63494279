import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { PageQuery, paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { endpointHealth } from "../health";
import { xapiScope } from "../policy";
import { XAPI_ENDPOINTS } from "../prefixes";
import { presentEndpoint } from "../present";
import { XapiEndpointPageSchema } from "../schemas";
import { listEndpoints } from "../service";

const TAGS = ["xAPI"];

export const listXapiEndpointsRoute = tokenRoute("xapi:read", {
  method: "get",
  path: XAPI_ENDPOINTS,
  tags: TAGS,
  operationId: "listXapiEndpoints",
  summary: "List Learning Record Stores",
  description:
    "The institution's xAPI endpoints, newest first (ties by id), each with its `health`. Secrets are never listed.",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(XapiEndpointPageSchema, "A page of endpoints.") },
});

export function registerListXapiEndpoints(app: OpenAPIHono<AppEnv>) {
  app.openapi(listXapiEndpointsRoute, async (c) => {
    const ctx = principalContext(c);
    const { page, per_page } = c.req.valid("query");
    const { total, rows } = await listEndpoints(ctx, {
      ...xapiScope(ctx.principal),
      page: { page, per_page },
    });
    const health = await endpointHealth(
      ctx,
      rows.map((r) => r.id),
    );
    const none = { sent: 0, failed: 0, pending: 0 };
    return c.json(
      paginate(
        c,
        { page, per_page },
        total,
        rows.map((r) => presentEndpoint(r, health.get(r.id) ?? none)),
      ),
      200,
    );
  });
}
