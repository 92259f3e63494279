import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { paginate } from "../../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI_LAUNCHES } from "../../prefixes";
import { LaunchParam } from "../../schemas";
import { RosterPageSchema, RosterQuery } from "../schemas";
import { launchRoster } from "../service";

/** GET /api/integrations/lti-launches/{launch}/members: the roster of the launch's context (NRPS 2.0). */
export const listLtiLaunchMembersRoute = tokenRoute("lti:read", {
  method: "get",
  path: `${LTI_LAUNCHES}/{launch}/members`,
  tags: ["LTI"],
  operationId: "listLtiLaunchMembers",
  summary: "List the members of a launch's course in the LMS (Names and Role Provisioning)",
  description:
    "Reads the roster of the launch's context from the platform, at once: the launch's `context_memberships_url` (its Names and Role Provisioning Services claim) with an access token for `https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly` and `Accept: application/vnd.ims.lti-nrps.v2.membershipcontainer+json`, following every `Link: <…>; rel=\"next\"` page (at most 50, on the same origin). `role` and `limit` are passed to the platform. The whole roster is sorted by `user_id` and paged here with `page` / `per_page`; `lingua_user_id` is the Lingua user linked to that `sub` (by a launch or a sync). `409 lti_roster_unavailable`: the launch carries no usable NRPS claim. `502 lti_platform_rejected`: the platform refused (its status in `platform_status`); `502 bad_gateway`: it failed or answered something unusable. Another institution's launch: 404.",
  request: { params: LaunchParam, query: RosterQuery },
  responses: {
    200: jsonResponse(RosterPageSchema, "A page of the roster."),
    409: errorResponses[409],
    502: { ...errorResponses[409], description: "`lti_platform_rejected` or `bad_gateway`." },
  },
});

export function registerListLtiLaunchMembers(app: OpenAPIHono<AppEnv>) {
  app.openapi(listLtiLaunchMembersRoute, async (c) => {
    const { page, per_page, role, limit } = c.req.valid("query");
    const roster = await launchRoster(principalContext(c), {
      launchId: c.req.valid("param").launch,
      role,
      limit,
    });
    const start = (page - 1) * per_page;
    return c.json(paginate(c, { page, per_page }, roster.length, roster.slice(start, start + per_page)), 200);
  });
}
