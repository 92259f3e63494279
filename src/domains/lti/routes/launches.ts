import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { requireInstitution } from "../../../platform/auth/principal";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { passbacksOf, presentPassback } from "../grades/passbacks";
import { findLaunch, listLaunches, presentLaunch } from "../launches";
import { LTI_LAUNCHES } from "../prefixes";
import { LaunchPageSchema, LaunchParam, LaunchWithPassbacksSchema, ListLaunchesQuery } from "../schemas";

const TAGS = ["LTI"];

const listRoute = tokenRoute("lti:read", {
  method: "get",
  path: LTI_LAUNCHES,
  tags: TAGS,
  operationId: "listLtiLaunches",
  summary: "List LTI launches (the launch log)",
  description:
    "Every launch of the institution's platforms, accepted or refused, newest first (ties by id). A refused launch carries `failure_reason` and `failure_detail`: what to fix in the platform's configuration. Refusals before the platform is known (an unknown `state`) belong to no institution and are not listed.",
  request: { query: ListLaunchesQuery },
  responses: { 200: jsonResponse(LaunchPageSchema, "A page of launches.") },
});

const getRoute = tokenRoute("lti:read", {
  method: "get",
  path: `${LTI_LAUNCHES}/{launch}`,
  tags: TAGS,
  operationId: "getLtiLaunch",
  summary: "Get an LTI launch and its grade passbacks",
  request: { params: LaunchParam },
  responses: { 200: jsonResponse(LaunchWithPassbacksSchema, "The launch, its passbacks newest first.") },
});

export function registerLaunchLogRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listRoute, async (c) => {
    const { page, per_page, ...filters } = c.req.valid("query");
    const { rows, total } = await listLaunches(c.env, requireInstitution(c.var.principal).id, filters, {
      page,
      per_page,
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentLaunch)), 200);
  });

  app.openapi(getRoute, async (c) => {
    const launch = await findLaunch(
      c.env,
      requireInstitution(c.var.principal).id,
      c.req.valid("param").launch,
    );
    const passbacks = await passbacksOf(c.env, launch.id);
    return c.json({ ...presentLaunch(launch), passbacks: passbacks.map(presentPassback) }, 200);
  });
}
