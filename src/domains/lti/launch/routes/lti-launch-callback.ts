import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { publicRoute } from "../../../../platform/openapi";
import { LTI } from "../../prefixes";
import { CallbackForm } from "../schemas";
import {
  answeringErrors,
  callback,
  callbackDescription,
  callbackResponses,
  form,
  limit,
  sharedCallbackNote,
} from "./browser-flow";

export const ltiLaunchCallbackRoute = publicRoute({
  method: "post",
  path: `${LTI}/callback`,
  tags: ["LTI"],
  operationId: "ltiLaunchCallback",
  summary: "LTI 1.3 launch (the platform's form post; shared callback, fallback)",
  description: callbackDescription(sharedCallbackNote),
  request: { body: form(CallbackForm) },
  responses: callbackResponses,
});

export function registerLtiLaunchCallback(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(ltiLaunchCallbackRoute);
  app.post(
    `${LTI}/callback`,
    limit,
    answeringErrors((c) => callback(c)),
  );
}
