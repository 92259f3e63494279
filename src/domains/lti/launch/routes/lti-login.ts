import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { publicRoute } from "../../../../platform/openapi";
import { LTI } from "../../prefixes";
import { LoginParams } from "../schemas";
import {
  answeringErrors,
  form,
  formLoginResponses,
  limit,
  login,
  loginDescription,
  loginResponses,
  readForm,
  sharedLoginNote,
} from "./browser-flow";

/** The shared login URL (the fallback), by GET and by form post: one operation, two methods. */
export const ltiLoginRoute = publicRoute({
  method: "get",
  path: `${LTI}/login`,
  tags: ["LTI"],
  operationId: "ltiLogin",
  summary: "LTI 1.3 OIDC login initiation (shared URL, fallback)",
  description: loginDescription(sharedLoginNote),
  request: { query: LoginParams },
  responses: loginResponses,
});

export const ltiLoginPostRoute = publicRoute({
  method: "post",
  path: `${LTI}/login`,
  tags: ["LTI"],
  operationId: "ltiLoginPost",
  summary: "LTI 1.3 OIDC login initiation (shared URL, fallback; form post)",
  description: loginDescription(sharedLoginNote),
  request: { body: form(LoginParams) },
  responses: formLoginResponses,
});

export function registerLtiLogin(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(ltiLoginRoute);
  app.openAPIRegistry.registerPath(ltiLoginPostRoute);
  app.get(
    `${LTI}/login`,
    limit,
    answeringErrors((c) => login(c, c.req.query())),
  );
  app.post(
    `${LTI}/login`,
    limit,
    answeringErrors(async (c) => login(c, await readForm(c))),
  );
}
