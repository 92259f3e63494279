import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { MEMBER } from "../paths";
import { presentMember } from "../present";
import { MemberParams, MemberSchema } from "../schemas";
import { getMember } from "../service";

export const getMemberRoute = tokenRoute("members:read", {
  method: "get",
  path: MEMBER,
  tags: ["Members"],
  operationId: "getMember",
  summary: "Get a member",
  request: { params: MemberParams },
  responses: { 200: jsonResponse(MemberSchema, "The member.") },
});

export function registerGetMember(app: OpenAPIHono<AppEnv>) {
  app.openapi(getMemberRoute, async (c) => {
    const { id, member } = c.req.valid("param");
    const row = await getMember(principalContext(c), { institutionId: id, memberId: member });
    return c.json(presentMember(row), 200);
  });
}
