import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { jsonBody, jsonResponse, publicRoute } from "../../../../platform/openapi";
import { errorResponses, institutionMovingResponse } from "../../../../platform/openapi-problems";
import { presentUser } from "../../../auth/present";
import { LTI } from "../../prefixes";
import { presentLaunch } from "../launch-log";
import { LaunchResultSchema, SessionExchangeBody } from "../schemas";
import { exchangeCode } from "../session";
import { LIMIT_NOTE, limit } from "./browser-flow";

export const exchangeLtiCodeRoute = publicRoute(
  {
    method: "post",
    path: `${LTI}/session`,
    tags: ["LTI"],
    operationId: "exchangeLtiCode",
    summary: "Exchange a launch code for a session",
    description: `The learning app posts the \`code\` of its URL fragment (single use, 2 minutes) and receives the launch, the user and a session token (8 hours). Unknown, used or expired codes: 401. ${LIMIT_NOTE}`,
    middleware: [limit],
    request: { body: jsonBody(SessionExchangeBody) },
    responses: {
      503: institutionMovingResponse,
      200: jsonResponse(LaunchResultSchema, "The launch's session."),
      401: errorResponses[401],
    },
  },
  { countedPerIp: true },
);

export function registerExchangeLtiCode(app: OpenAPIHono<AppEnv>) {
  app.openapi(exchangeLtiCodeRoute, async (c) => {
    const outcome = await exchangeCode(c.get("ctx"), c.req.valid("json").code);
    c.header("Cache-Control", "no-store");
    return c.json(
      { launch: presentLaunch(outcome.launch), user: presentUser(outcome.user), session: outcome.session },
      200,
    );
  });
}
