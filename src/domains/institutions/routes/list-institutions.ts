import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { requestCursor, withCursorLinks } from "../../../platform/http/spread-pages";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { presentInstitution } from "../present";
import { InstitutionPageSchema, ListInstitutionsQuery } from "../schemas";
import { institutionListKey, listInstitutions } from "../service";

export const listInstitutionsRoute = tokenRoute("institutions:read", {
  method: "get",
  path: INSTITUTIONS,
  tags: ["Institutions"],
  operationId: "listInstitutions",
  summary: "List institutions",
  description:
    "Platform staff see every institution (filters `q`, `plan`); everybody else only their own. Ordered by name (in any case), ties by id. Institutions live in several databases; the list is one list across them (`links.next` and `links.prev` carry an opaque `cursor`: follow them unchanged).",
  request: { query: ListInstitutionsQuery },
  responses: { 200: jsonResponse(InstitutionPageSchema, "A page of institutions.") },
});

export function registerListInstitutions(app: OpenAPIHono<AppEnv>) {
  app.openapi(listInstitutionsRoute, async (c) => {
    const { page, per_page, q, plan, cursor } = c.req.valid("query");
    const request = { page, per_page };
    const listed = await listInstitutions(principalContext(c), {
      page: request,
      cursor: requestCursor(request, cursor),
      q,
      plan,
    });
    const data = listed.rows.map((r) => presentInstitution(r.institution, r.memberCount));
    return c.json(
      withCursorLinks(paginate(c, request, listed.total, data), request, listed, institutionListKey),
      200,
    );
  });
}
