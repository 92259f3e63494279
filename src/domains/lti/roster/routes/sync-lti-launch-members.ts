import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI_LAUNCHES } from "../../prefixes";
import { LaunchParam } from "../../schemas";
import { RosterSyncSchema } from "../schemas";
import { presentSync, syncLaunchRoster } from "../syncs";

/** POST /api/integrations/lti-launches/{launch}/members/sync: the roster's active members made Lingua members. */
export const syncLtiLaunchMembersRoute = tokenRoute("lti:write", {
  method: "post",
  path: `${LTI_LAUNCHES}/{launch}/members/sync`,
  tags: ["LTI"],
  operationId: "syncLtiLaunchMembers",
  summary: "Make every active member of a launch's course a Lingua member",
  description:
    "Reads the launch's roster from the platform (as `GET …/members`) and makes each `Active` member who is not linked yet a member of the institution, as their first launch would: an active account linked to their LTI `sub` at this registration (they sign in through the LMS; no invitation is sent), with the roster's name and e-mail (an e-mail another account holds is left out), the role their LMS roles give (`Instructor` / `Administrator`: instructor; others: learner), a seat taken and `member.created` emitted. Members already linked are left unchanged; members without a seat left are counted in `seats_exhausted`. Idempotent: syncing again creates only who is new. 500 active members or fewer: done within the request, `200` with the counts. More: `202` with a `queued` sync that a queue works through; follow it with `GET …/members/sync`. While one is queued or processing, a new request answers that sync (`202`) and starts nothing.",
  request: { params: LaunchParam },
  responses: {
    200: jsonResponse(RosterSyncSchema, "Synced within the request."),
    202: jsonResponse(RosterSyncSchema, "Queued (or already running)."),
    409: errorResponses[409],
    502: { ...errorResponses[409], description: "`lti_platform_rejected` or `bad_gateway`." },
  },
});

export function registerSyncLtiLaunchMembers(app: OpenAPIHono<AppEnv>) {
  app.openapi(syncLtiLaunchMembersRoute, async (c) => {
    const { sync, queued } = await syncLaunchRoster(principalContext(c), c.req.valid("param").launch);
    return c.json(presentSync(sync), queued ? 202 : 200);
  });
}
