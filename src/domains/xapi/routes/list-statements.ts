import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { listStatements } from "../forwarding-log";
import { xapiScope } from "../policy";
import { XAPI_ENDPOINTS } from "../prefixes";
import { presentStatement } from "../present";
import { ListStatementsQuery, XapiEndpointIdParam, XapiStatementLogPageSchema } from "../schemas";
import { findEndpoint } from "../service";

const TAGS = ["xAPI"];

export const listXapiStatementsRoute = tokenRoute("xapi:read", {
  method: "get",
  path: `${XAPI_ENDPOINTS}/{id}/statements`,
  tags: TAGS,
  operationId: "listXapiStatements",
  summary: "The forwarding log",
  description:
    "The statements made for this endpoint, newest first (by when they were stored; those stored in the same second grouped as they were sent, the latest-happened first within a group): each one's id (as the LRS stores it), verb, activity IRI, member, status, attempts, last error and when it was sent. Filter by `status` and `verb`.",
  request: { params: XapiEndpointIdParam, query: ListStatementsQuery },
  responses: { 200: jsonResponse(XapiStatementLogPageSchema, "A page of the forwarding log.") },
});

export function registerListXapiStatements(app: OpenAPIHono<AppEnv>) {
  app.openapi(listXapiStatementsRoute, async (c) => {
    const ctx = principalContext(c);
    const endpoint = await findEndpoint(ctx, { ...xapiScope(ctx.principal), id: c.req.valid("param").id });
    const { page, per_page, status, verb } = c.req.valid("query");
    const { total, rows } = await listStatements(ctx, {
      endpointId: endpoint.id,
      status,
      verb,
      page: { page, per_page },
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentStatement)), 200);
  });
}
