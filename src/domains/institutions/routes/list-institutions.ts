import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { presentInstitution } from "../present";
import { InstitutionPageSchema, ListInstitutionsQuery } from "../schemas";
import { listInstitutions } from "../service";

export const listInstitutionsRoute = tokenRoute("institutions:read", {
  method: "get",
  path: INSTITUTIONS,
  tags: ["Institutions"],
  operationId: "listInstitutions",
  summary: "List institutions",
  description:
    "Platform staff see every institution (filters `q`, `plan`); everybody else only their own. Ordered by name, ties by id.",
  request: { query: ListInstitutionsQuery },
  responses: { 200: jsonResponse(InstitutionPageSchema, "A page of institutions.") },
});

export function registerListInstitutions(app: OpenAPIHono<AppEnv>) {
  app.openapi(listInstitutionsRoute, async (c) => {
    const { page, per_page, q, plan } = c.req.valid("query");
    const { rows, total } = await listInstitutions(principalContext(c), {
      page: { page, per_page },
      q,
      plan,
    });
    const data = rows.map((r) => presentInstitution(r.institution, r.memberCount));
    return c.json(paginate(c, { page, per_page }, total, data), 200);
  });
}
