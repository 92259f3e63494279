import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { publicRoute } from "../../../../platform/openapi";
import { LTI } from "../../prefixes";
import { appPage } from "../pages";
import { html } from "./browser-flow";

export const ltiLaunchPageRoute = publicRoute({
  method: "get",
  path: `${LTI}/app`,
  tags: ["LTI"],
  operationId: "ltiLaunchPage",
  summary: "Default launch page",
  description:
    "Where browsers land after a launch when the deployment sets no `LTI_APP_URL`: exchanges the fragment's code and shows the launched course or lesson.",
  responses: { 200: html("The page.") },
});

export function registerLtiLaunchPage(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(ltiLaunchPageRoute);
  app.get(`${LTI}/app`, () => appPage());
}
