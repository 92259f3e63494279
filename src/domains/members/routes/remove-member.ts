import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { MEMBER } from "../paths";
import { MemberParams } from "../schemas";
import { removeMember } from "../service";

export const removeMemberRoute = tokenRoute("members:write", {
  method: "delete",
  path: MEMBER,
  tags: ["Members"],
  operationId: "removeMember",
  summary: "Remove a member",
  description:
    "Removes the member from the institution and revokes every session and token it holds at once (the next request with one is 401). Its learning history stays in the institution's reports. Removing the last active institution admin is `409 last_admin`. Emits `member.removed`.",
  request: { params: MemberParams },
  responses: {
    204: { description: "Removed." },
    409: { ...errorResponses[409], description: "`last_admin`." },
  },
});

export function registerRemoveMember(app: OpenAPIHono<AppEnv>) {
  app.openapi(removeMemberRoute, async (c) => {
    const { id, member } = c.req.valid("param");
    await removeMember(principalContext(c), { institutionId: id, memberId: member });
    return c.body(null, 204);
  });
}
