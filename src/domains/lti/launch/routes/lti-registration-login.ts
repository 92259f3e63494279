import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { publicRoute } from "../../../../platform/openapi";
import { LTI } from "../../prefixes";
import { IdParam } from "../../schemas";
import { LoginParams } from "../schemas";
import {
  answeringErrors,
  boundLoginNote,
  form,
  formLoginResponses,
  limit,
  login,
  loginDescription,
  loginResponses,
  readForm,
} from "./browser-flow";

/** A registration's own login URL (`tool.login_url`), by GET and by form post: one operation, two methods. */
export const ltiRegistrationLoginRoute = publicRoute({
  method: "get",
  path: `${LTI}/login/{id}`,
  tags: ["LTI"],
  operationId: "ltiRegistrationLogin",
  summary: "LTI 1.3 OIDC login initiation (a registration's own URL)",
  description: loginDescription(boundLoginNote),
  request: { params: IdParam, query: LoginParams },
  responses: loginResponses,
});

export const ltiRegistrationLoginPostRoute = publicRoute({
  method: "post",
  path: `${LTI}/login/{id}`,
  tags: ["LTI"],
  operationId: "ltiRegistrationLoginPost",
  summary: "LTI 1.3 OIDC login initiation (a registration's own URL; form post)",
  description: loginDescription(boundLoginNote),
  request: { params: IdParam, body: form(LoginParams) },
  responses: formLoginResponses,
});

export function registerLtiRegistrationLogin(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(ltiRegistrationLoginRoute);
  app.openAPIRegistry.registerPath(ltiRegistrationLoginPostRoute);
  app.get(
    `${LTI}/login/:id`,
    limit,
    answeringErrors((c) => login(c, c.req.query(), c.req.param("id"))),
  );
  app.post(
    `${LTI}/login/:id`,
    limit,
    answeringErrors(async (c) => login(c, await readForm(c), c.req.param("id"))),
  );
}
