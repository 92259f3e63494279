import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { PageQuery, paginate } from "../../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { xapiScope } from "../../policy";
import { XAPI_ENDPOINTS } from "../../prefixes";
import { XapiEndpointIdParam } from "../../schemas";
import { findEndpoint } from "../../service";
import { presentBackfill } from "../present";
import { XapiBackfillPageSchema } from "../schemas";
import { listBackfills } from "../service";

const TAGS = ["xAPI"];

export const listXapiBackfillsRoute = tokenRoute("xapi:read", {
  method: "get",
  path: `${XAPI_ENDPOINTS}/{id}/backfills`,
  tags: TAGS,
  operationId: "listXapiBackfills",
  summary: "The endpoint's back-fills",
  description: "The back-fills of this endpoint, newest first (ties by id).",
  request: { params: XapiEndpointIdParam, query: PageQuery },
  responses: { 200: jsonResponse(XapiBackfillPageSchema, "A page of back-fills.") },
});

export function registerListXapiBackfills(app: OpenAPIHono<AppEnv>) {
  app.openapi(listXapiBackfillsRoute, async (c) => {
    const ctx = principalContext(c);
    const endpoint = await findEndpoint(ctx, { ...xapiScope(ctx.principal), id: c.req.valid("param").id });
    const { page, per_page } = c.req.valid("query");
    const { total, rows } = await listBackfills(ctx, { endpointId: endpoint.id, page: { page, per_page } });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentBackfill)), 200);
  });
}
