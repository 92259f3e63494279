import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { MEMBER } from "../paths";
import { presentMember } from "../present";
import { MemberParams, MemberSchema, UpdateMemberBody } from "../schemas";
import { updateMember } from "../service";

export const updateMemberRoute = tokenRoute("members:write", {
  method: "patch",
  path: MEMBER,
  tags: ["Members"],
  operationId: "updateMember",
  summary: "Change a member",
  description:
    "Changes `name`, `role`, `status` (`active` or `suspended`), `external_id` or `groups` (replaced as a whole); fields left out keep their value. A role change applies to every session and token of the member from its very next request; a suspension revokes them all at once (the next request is 401). Nobody grants a role above their own (403); demoting or suspending the last active institution admin is `409 last_admin`; re-activating a suspended member needs a free seat (`409 seat_limit_reached`). The change is made against the member as it is when written: a PATCH that another request's change overtook is applied again to the member as that left it, so two PATCHes at once both land (of one field, the later wins); one overtaken again and again is `409 conflict`. Emits `member.updated` with the `changes`, each `from` what the member was just before.",
  request: { params: MemberParams, body: jsonBody(UpdateMemberBody) },
  responses: {
    200: jsonResponse(MemberSchema, "The member as changed."),
    409: {
      ...errorResponses[409],
      description: "`last_admin`, `external_id_taken`, `seat_limit_reached`, `conflict`.",
    },
  },
});

export function registerUpdateMember(app: OpenAPIHono<AppEnv>) {
  app.openapi(updateMemberRoute, async (c) => {
    const { id, member } = c.req.valid("param");
    const row = await updateMember(principalContext(c), {
      institutionId: id,
      memberId: member,
      patch: c.req.valid("json"),
    });
    return c.json(presentMember(row), 200);
  });
}
