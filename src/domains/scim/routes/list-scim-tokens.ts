import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { PageQuery, paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { presentScimToken } from "../present";
import { InstitutionParams, ScimTokenPageSchema } from "../schemas";
import { listScimTokens } from "../tokens";

export const listScimTokensRoute = tokenRoute("sso:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/scim-tokens`,
  tags: ["Institutions"],
  operationId: "listScimTokens",
  summary: "List SCIM tokens",
  description:
    "The institution's live SCIM tokens, newest first (ties by id), with when each was last used. Plain values are never listed. Another institution's id: 404.",
  request: { params: InstitutionParams, query: PageQuery },
  responses: { 200: jsonResponse(ScimTokenPageSchema, "A page of SCIM tokens.") },
});

export function registerListScimTokens(app: OpenAPIHono<AppEnv>) {
  app.openapi(listScimTokensRoute, async (c) => {
    const { page, per_page } = c.req.valid("query");
    const { rows, total } = await listScimTokens(principalContext(c), {
      institutionId: c.req.valid("param").id,
      page: { page, per_page },
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentScimToken)), 200);
  });
}
