import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { jsonBody, jsonResponse, publicRoute } from "../../../platform/openapi";
import { errorResponses, institutionMovingResponse } from "../../../platform/openapi-problems";
import { clientIp, limitByIp } from "../../../platform/ratelimit/middleware";
import { IP_POLICIES, SIGN_IN_FAILURES } from "../../../platform/ratelimit/policies";
import { SESSION_LIMIT } from "../../tokens/service";
import { AUTH } from "../prefixes";
import { presentSignIn } from "../present";
import { SignInBody, SignInResponseSchema } from "../schemas";
import { signIn } from "../service";

const { pair, address } = SIGN_IN_FAILURES;

export const signInRoute = publicRoute(
  {
    method: "post",
    path: `${AUTH}/sign-in`,
    tags: ["Authentication"],
    operationId: "signIn",
    summary: "Sign in with e-mail and password",
    description: `Returns a session token (kind \`session\`, every ability the role allows) valid for 30 days; a user keeps at most ${SESSION_LIMIT} live sessions, and signing in again retires the oldest. A wrong e-mail and a wrong password answer the same 401. Limited to ${IP_POLICIES.signIn.limit} attempts per client address per minute. Failures are counted per e-mail address and client address together: ${pair.limit} failures in ${pair.windowSeconds / 60} minutes block that pair (429, whatever the password, policy \`"${pair.policy}"\`), and a success resets it; ${address.limit} failures in ${address.windowSeconds / 60} minutes from one client address, across every e-mail, block that address (policy \`"${address.policy}"\`). A correct password from an address that has not failed for the e-mail always signs in, unless the address's institution enforces single sign-on (403 \`sso_required\` with \`sso_url\`). Responses carry the address's rate-limit headers, except a 429 of a failure limit, which carries that limit's headers.`,
    middleware: [limitByIp(IP_POLICIES.signIn)],
    request: { body: jsonBody(SignInBody) },
    responses: {
      503: institutionMovingResponse,
      200: jsonResponse(SignInResponseSchema, "Signed in."),
      401: errorResponses[401],
      403: {
        ...errorResponses[403],
        description:
          "`sso_required`: the address's domain belongs to an institution that enforces single sign-on (an active connection with `enforced: true` and the domain verified). The problem's `sso_url` (`/api/auth/sso?email=…`) is where to send the person's browser. Answered before the password is checked; platform staff and the institution's break-glass admin (`break_glass_admin_id`) keep their passwords.",
      },
    },
  },
  { countedPerIp: true },
);

export function registerSignIn(app: OpenAPIHono<AppEnv>) {
  app.openapi(signInRoute, async (c) => {
    const { email, password } = c.req.valid("json");
    const session = await signIn(c.get("ctx"), {
      email,
      password,
      clientAddress: clientIp(c),
      origin: new URL(c.req.url).origin,
    });
    c.header("Cache-Control", "no-store");
    return c.json(presentSignIn(session), 200);
  });
}
