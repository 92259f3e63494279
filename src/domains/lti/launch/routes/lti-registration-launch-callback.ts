import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { publicRoute } from "../../../../platform/openapi";
import { LTI } from "../../prefixes";
import { IdParam } from "../../schemas";
import { CallbackForm } from "../schemas";
import {
  answeringErrors,
  boundCallbackNote,
  callback,
  callbackDescription,
  callbackResponses,
  form,
  limit,
} from "./browser-flow";

export const ltiRegistrationLaunchCallbackRoute = publicRoute({
  method: "post",
  path: `${LTI}/callback/{id}`,
  tags: ["LTI"],
  operationId: "ltiRegistrationLaunchCallback",
  summary: "LTI 1.3 launch (the platform's form post; a registration's own redirect URI)",
  description: callbackDescription(boundCallbackNote),
  request: { params: IdParam, body: form(CallbackForm) },
  responses: callbackResponses,
});

export function registerLtiRegistrationLaunchCallback(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(ltiRegistrationLaunchCallbackRoute);
  app.post(
    `${LTI}/callback/:id`,
    limit,
    answeringErrors((c) => callback(c, c.req.param("id"))),
  );
}
