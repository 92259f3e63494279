import type { OpenAPIHono, z } from "@hono/zod-openapi";
import type { TypedResponse } from "hono";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginateJson } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { TOKENS } from "../prefixes";
import { ListTokensQuery, TokenPageSchema } from "../schemas";
import { listTokens } from "../service";

export const listTokensRoute = tokenRoute("tokens:read", {
  method: "get",
  path: TOKENS,
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
    const { total, dataJson } = await listTokens(principalContext(c), { page: { page, per_page }, kind });
    // The items arrive from SQLite as JSON text in TokenSchema's shape; the envelope is spliced around them.
    const body = paginateJson(c, { page, per_page }, total, dataJson);
    return c.body(body, 200, { "Content-Type": "application/json" }) as unknown as TypedResponse<
      z.infer<typeof TokenPageSchema>,
      200,
      "json"
    >;
  });
}
