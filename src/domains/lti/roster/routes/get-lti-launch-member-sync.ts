import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { LTI_LAUNCHES } from "../../prefixes";
import { LaunchParam } from "../../schemas";
import { RosterSyncSchema } from "../schemas";
import { latestLaunchSync, presentSync } from "../syncs";

/** GET /api/integrations/lti-launches/{launch}/members/sync: the launch's latest roster sync. */
export const getLtiLaunchMemberSyncRoute = tokenRoute("lti:read", {
  method: "get",
  path: `${LTI_LAUNCHES}/{launch}/members/sync`,
  tags: ["LTI"],
  operationId: "getLtiLaunchMemberSync",
  summary: "Get the latest roster sync of a launch",
  description:
    "The launch's most recent `POST …/members/sync`: its status and counts, which a queued sync updates when it finishes. 404 when the launch has had no sync.",
  request: { params: LaunchParam },
  responses: { 200: jsonResponse(RosterSyncSchema, "The latest sync.") },
});

export function registerGetLtiLaunchMemberSync(app: OpenAPIHono<AppEnv>) {
  app.openapi(getLtiLaunchMemberSyncRoute, async (c) => {
    return c.json(presentSync(await latestLaunchSync(principalContext(c), c.req.valid("param").launch)), 200);
  });
}
