import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { errorResponses, jsonBody, jsonResponse, publicRoute } from "../../../platform/openapi";
import { limitByIp } from "../../../platform/ratelimit/middleware";
import { IP_POLICIES, SIGN_IN_FAILURES } from "../../../platform/ratelimit/policies";
import { presentUser } from "../present";
import { SignInBody, SignInResponseSchema } from "../schemas";
import { signIn } from "../service";

export const signInRoute = publicRoute(
  {
    method: "post",
    path: "/api/auth/sign-in",
    tags: ["Authentication"],
    operationId: "signIn",
    summary: "Sign in with e-mail and password",
    description: `Returns a session token (kind \`session\`, every ability the role allows) valid for 30 days. A wrong e-mail and a wrong password answer the same 401. Limited to ${IP_POLICIES.signIn.limit} attempts per client IP per minute and to ${SIGN_IN_FAILURES.limit} failed attempts per e-mail address per ${SIGN_IN_FAILURES.windowSeconds / 60} minutes. Responses carry the address's rate-limit headers, except the 429 of the e-mail's limit, which carries that limit's headers (policy \`"${SIGN_IN_FAILURES.policy}"\`, \`w=${SIGN_IN_FAILURES.windowSeconds}\`).`,
    middleware: [limitByIp(IP_POLICIES.signIn)],
    request: { body: jsonBody(SignInBody) },
    responses: { 200: jsonResponse(SignInResponseSchema, "Signed in."), 401: errorResponses[401] },
  },
  { countedPerIp: true },
);

export function registerSignIn(app: OpenAPIHono<AppEnv>) {
  app.openapi(signInRoute, async (c) => {
    const { email, password } = c.req.valid("json");
    const session = await signIn(c.env, email, password);
    c.header("Cache-Control", "no-store");
    return c.json(
      {
        token: session.token,
        token_type: "Bearer" as const,
        token_id: session.tokenId,
        expires_at: session.expiresAt,
        user: presentUser(session.user),
      },
      200,
    );
  });
}
