import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { INVITATIONS } from "../paths";
import { presentWithInvitation } from "../present";
import { CreatedMemberSchema, InstitutionIdParam, ReinviteBody } from "../schemas";
import { reinviteMember } from "../service";

export const reinviteMemberRoute = tokenRoute("members:write", {
  method: "post",
  path: INVITATIONS,
  tags: ["Members"],
  operationId: "reinviteMember",
  summary: "Send a member a new invitation",
  description:
    "For an `invited` member (`member_id`) whose invitation was lost or expired: a new single-use `invitation_url`, valid 7 days, shown once; the previous one stops working. A member who is not `invited` is `409 conflict`; another institution's member 404.",
  request: { params: InstitutionIdParam, body: jsonBody(ReinviteBody) },
  responses: {
    201: jsonResponse(CreatedMemberSchema, "The member, with its new invitation URL."),
    409: { ...errorResponses[409], description: "The member is not `invited`." },
  },
});

export function registerReinviteMember(app: OpenAPIHono<AppEnv>) {
  app.openapi(reinviteMemberRoute, async (c) => {
    const created = await reinviteMember(principalContext(c), {
      institutionId: c.req.valid("param").id,
      memberId: c.req.valid("json").member_id,
      origin: new URL(c.req.url).origin,
    });
    return c.json(presentWithInvitation(created), 201);
  });
}
