import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { jsonBody, jsonResponse, publicRoute } from "../../../platform/openapi";
import { errorResponses, institutionMovingResponse } from "../../../platform/openapi-problems";
import { presentSignIn } from "../../auth/present";
import { SignInResponseSchema } from "../../auth/schemas";
import { AUTH_SSO } from "../prefixes";
import { SsoSessionBody } from "../schemas";
import { exchangeSsoCode } from "../session";
import { SSO_LIMIT_NOTE, ssoLimit } from "./begin-sso-sign-in";

export const exchangeSsoCodeRoute = publicRoute(
  {
    method: "post",
    path: `${AUTH_SSO}/session`,
    tags: ["Authentication"],
    operationId: "exchangeSsoCode",
    summary: "Exchange an SSO sign-in code for a session",
    description: `After a sign-in through the identity provider, the browser lands on the worker's page \`/dashboard/sso\` with \`#code=…\` in the URL fragment (single use, valid 60 seconds). Posting the code here answers exactly what \`POST /api/auth/sign-in\` answers: a session token (kind \`session\`, every ability the role allows, 30 days), its id and expiry, and the user. An unknown, used or expired code, or a member suspended or removed since the sign-in: 401. ${SSO_LIMIT_NOTE}`,
    middleware: [ssoLimit],
    request: { body: jsonBody(SsoSessionBody) },
    responses: {
      503: institutionMovingResponse,
      200: jsonResponse(SignInResponseSchema, "Signed in."),
      401: errorResponses[401],
    },
  },
  { countedPerIp: true },
);

export function registerExchangeSsoCode(app: OpenAPIHono<AppEnv>) {
  app.openapi(exchangeSsoCodeRoute, async (c) => {
    const session = await exchangeSsoCode(c.get("ctx"), c.req.valid("json").code);
    c.header("Cache-Control", "no-store");
    return c.json(presentSignIn(session), 200);
  });
}
