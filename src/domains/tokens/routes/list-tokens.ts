import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { ListTokensQuery, TokenPageSchema } from "../schemas";
import { presentToken } from "../present";
import { listTokens } from "../service";

export const listTokensRoute = tokenRoute("tokens:read", {
  method: "get",
  path: "/api/integrations/tokens",
  tags: ["Tokens"],
  operationId: "listTokens",
  summary: "List API tokens",
  description:
    "Active tokens you manage, newest first (ties by id): an institution admin sees every token of the institution, anybody else their own. Plain values are never listed.",
  request: { query: ListTokensQuery },
  responses: { 200: jsonResponse(TokenPageSchema, "A page of tokens.") },
});

export function registerListTokens(app: OpenAPIHono<AppEnv>) {
  app.openapi(listTokensRoute, async (c) => {
    const { page, per_page, kind } = c.req.valid("query");
    const { total, rows } = await listTokens({ env: c.env, principal: c.var.principal, page: { page, per_page }, kind });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentToken)), 200);
  });
}
