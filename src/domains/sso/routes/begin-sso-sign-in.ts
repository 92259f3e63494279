import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { validationError } from "../../../platform/errors";
import { wantsJson } from "../../../platform/http/negotiation";
import { jsonResponse, publicRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { limitByIp } from "../../../platform/ratelimit/middleware";
import { IP_POLICIES } from "../../../platform/ratelimit/policies";
import { beginSsoSignIn } from "../begin";
import { AUTH_SSO } from "../prefixes";
import { BeginSsoQuery, SsoRedirectSchema } from "../schemas";

export const ssoLimit = limitByIp(IP_POLICIES.sso);
export const SSO_LIMIT_NOTE = `Limited to ${IP_POLICIES.sso.limit} requests per client IP per minute (with the IdP callbacks and the code exchange).`;

export const beginSsoSignInRoute = publicRoute(
  {
    method: "get",
    path: AUTH_SSO,
    tags: ["Authentication"],
    operationId: "beginSsoSignIn",
    summary: "Begin a sign-in through the institution's identity provider (SSO)",
    description: `Finds the institution by the e-mail address's domain — the institution holding it **verified** (exactly that domain, not a parent) — or by \`institution\` (its slug), and, when its SSO is \`active\`, starts a sign-in with its identity provider: a pending request (\`state\`, nonce, PKCE verifier; single use, 10 minutes) is stored server-side and bound to this browser by a cookie \`sso_state_<state>\` (\`Path=/api/auth/sso; Secure; HttpOnly; SameSite=None\`, 10 minutes) that the IdP's answer must bring back. A browser gets 302 to the IdP; a client sending \`Accept: application/json\` gets \`200 { redirect_url }\` (the same URL; the cookie is set as well, and the callback needs it back). OIDC: authorization code flow with PKCE (S256) and \`response_mode=query\` to the discovered \`authorization_endpoint\`, with the e-mail address as \`login_hint\`. No institution with that verified domain (or slug), or its SSO not \`active\`: \`404 sso_not_configured\` — the same answer for both. Send exactly one of \`email\` and \`institution\` (422 otherwise). ${SSO_LIMIT_NOTE}`,
    middleware: [ssoLimit],
    request: { query: BeginSsoQuery },
    responses: {
      200: jsonResponse(SsoRedirectSchema, "With `Accept: application/json`: where to send the browser."),
      302: {
        description: "To the identity provider.",
        headers: {
          Location: { schema: { type: "string" as const } },
          "Set-Cookie": {
            schema: { type: "string" as const },
            description: "`sso_state_<state>`, 10 minutes.",
          },
        },
      },
      404: {
        ...errorResponses[404],
        description: "`sso_not_configured`: no active SSO for this address or slug.",
      },
    },
  },
  { countedPerIp: true },
);

export function registerBeginSsoSignIn(app: OpenAPIHono<AppEnv>) {
  app.openapi(beginSsoSignInRoute, async (c) => {
    const { email, institution } = c.req.valid("query");
    if ((email === undefined) === (institution === undefined))
      throw validationError([{ path: "email", message: "send exactly one of email and institution" }]);
    const begun = await beginSsoSignIn(c.get("ctx"), {
      email,
      institution,
      origin: new URL(c.req.url).origin,
    });
    c.header("Set-Cookie", begun.cookie);
    c.header("Cache-Control", "no-store");
    if (wantsJson(c)) return c.json({ redirect_url: begun.location }, 200);
    return c.redirect(begun.location, 302);
  });
}
