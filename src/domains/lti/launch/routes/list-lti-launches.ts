import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { paginate } from "../../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { LTI_LAUNCHES } from "../../prefixes";
import { listLaunches, presentLaunch } from "../launch-log";
import { LaunchPageSchema, ListLaunchesQuery } from "../schemas";

export const listLtiLaunchesRoute = tokenRoute("lti:read", {
  method: "get",
  path: LTI_LAUNCHES,
  tags: ["LTI"],
  operationId: "listLtiLaunches",
  summary: "List LTI launches (the launch log)",
  description:
    "Every launch of the institution's platforms, accepted or refused, newest first (ties by id). A refused launch carries `failure_reason` and `failure_detail`: what to fix in the platform's configuration. Refusals before the platform is known (an unknown `state`) belong to no institution and are not listed.",
  request: { query: ListLaunchesQuery },
  responses: { 200: jsonResponse(LaunchPageSchema, "A page of launches.") },
});

export function registerListLtiLaunches(app: OpenAPIHono<AppEnv>) {
  app.openapi(listLtiLaunchesRoute, async (c) => {
    const { page, per_page, ...filters } = c.req.valid("query");
    const { rows, total } = await listLaunches(principalContext(c), { filters, page: { page, per_page } });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentLaunch)), 200);
  });
}
