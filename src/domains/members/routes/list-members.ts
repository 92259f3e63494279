import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { MEMBERS } from "../paths";
import { presentMember } from "../present";
import { InstitutionIdParam, ListMembersQuery, MemberPageSchema } from "../schemas";
import { listMembers } from "../service";

export const listMembersRoute = tokenRoute("members:read", {
  method: "get",
  path: MEMBERS,
  tags: ["Members"],
  operationId: "listMembers",
  summary: "List an institution's members",
  description:
    "Filters `role`, `status`, `group`, `external_id` and `q` (name or e-mail contains); ordered by `name` (then id) unless `sort` says otherwise. Institution admins and instructors read their own institution's members, platform staff any institution's; another institution's id is 404.",
  request: { params: InstitutionIdParam, query: ListMembersQuery },
  responses: { 200: jsonResponse(MemberPageSchema, "A page of members.") },
});

export function registerListMembers(app: OpenAPIHono<AppEnv>) {
  app.openapi(listMembersRoute, async (c) => {
    const { page, per_page, sort, ...filters } = c.req.valid("query");
    const { rows, total } = await listMembers(principalContext(c), {
      institutionId: c.req.valid("param").id,
      filters,
      sort,
      page: { page, per_page },
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentMember)), 200);
  });
}
