import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { passbacksOf, presentPassback } from "../../grades/passbacks";
import { LTI_LAUNCHES } from "../../prefixes";
import { LaunchParam } from "../../schemas";
import { getLaunch, presentLaunch } from "../launch-log";
import { LaunchWithPassbacksSchema } from "../schemas";

export const getLtiLaunchRoute = tokenRoute("lti:read", {
  method: "get",
  path: `${LTI_LAUNCHES}/{launch}`,
  tags: ["LTI"],
  operationId: "getLtiLaunch",
  summary: "Get an LTI launch and its grade passbacks",
  request: { params: LaunchParam },
  responses: { 200: jsonResponse(LaunchWithPassbacksSchema, "The launch, its passbacks newest first.") },
});

export function registerGetLtiLaunch(app: OpenAPIHono<AppEnv>) {
  app.openapi(getLtiLaunchRoute, async (c) => {
    const ctx = principalContext(c);
    const launch = await getLaunch(ctx, c.req.valid("param").launch);
    const passbacks = await passbacksOf(ctx, launch.id);
    return c.json({ ...presentLaunch(launch), passbacks: passbacks.map(presentPassback) }, 200);
  });
}
