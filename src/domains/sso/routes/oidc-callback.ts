import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { getCookie } from "hono/cookie";
import type { AppEnv } from "../../../env";
import { publicRoute } from "../../../platform/openapi";
import { errorResponses, institutionMovingResponse } from "../../../platform/openapi-problems";
import { oidcCallback } from "../oidc/callback";
import { STATE_COOKIE_PREFIX, stateCookie } from "../pending";
import { AUTH_SSO, LANDING_PATH } from "../prefixes";
import { reasonsText } from "../schemas";
import { SSO_LIMIT_NOTE, ssoLimit } from "./begin-sso-sign-in";

const CallbackParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});
const CallbackQuery = z.object({
  state: z.string().max(512).optional(),
  code: z.string().max(4096).optional(),
  error: z.string().max(512).optional(),
  error_description: z.string().max(2048).optional(),
  iss: z.string().max(2048).optional(),
  session_state: z.string().max(512).optional(),
  scope: z.string().max(2048).optional(),
});

export const oidcCallbackRoute = publicRoute(
  {
    method: "get",
    path: `${AUTH_SSO}/oidc/{id}/callback`,
    tags: ["Authentication"],
    operationId: "ssoOidcCallback",
    summary: "OIDC redirect URI (the IdP sends the browser here)",
    description: `The \`redirect_uri\` the SSO settings announce (\`oidc.redirect_uri\`). The OpenID Provider sends the browser here with \`code\` and \`state\` (\`response_mode=query\`), and \`iss\` when it supports RFC 9207 (then it must be the configured issuer: \`issuer_mismatch\`). Lingua takes the pending request (single use, 10 minutes, this institution's, with the browser's \`sso_state_<state>\` cookie), exchanges the code at the discovered \`token_endpoint\` through the outbound gate (PKCE \`code_verifier\`; the sealed client secret by \`client_secret_basic\`, or \`client_secret_post\` when the discovery document offers only that), and verifies the ID token against the discovered \`jwks_uri\`: \`alg\` in the discovery document's \`id_token_signing_alg_values_supported\` (RS256 when absent) and never \`none\` or HS*, signature, \`iss\`, \`aud\` (the client id), \`azp\`, \`exp\`/\`iat\` with 60 s of skew, \`nonce\`. The person is read through \`claim_mapping\`; \`email_verified: false\` is refused. The member is found by (institution, \`sub\`), else by e-mail within the institution's verified domains, else created (just in time) as an \`active\` member with the mapped role (never above \`instructor\` unless \`idp_may_grant_admin\`) and groups; an invited member becomes active, a suspended one is refused. Then 303 to \`${LANDING_PATH}\` with \`#code=…\` (single use, 60 s) for \`POST /api/auth/sso/session\`. Every sign-in and refusal is written to the SSO log. A refusal answers \`400 sso_sign_in_refused\` with \`reason\` and \`sign_in_id\` (502 \`bad_gateway\` when the provider's token endpoint or key set failed): ${reasonsText}. ${SSO_LIMIT_NOTE}`,
    middleware: [ssoLimit],
    request: { params: CallbackParams, query: CallbackQuery },
    responses: {
      503: institutionMovingResponse,
      303: {
        description: "To the landing page, the single-use code in the URL fragment.",
        headers: { Location: { schema: { type: "string" as const } } },
      },
      400: {
        ...errorResponses[400],
        description: "`sso_sign_in_refused`: `reason` and `sign_in_id` say why.",
      },
      409: {
        ...errorResponses[409],
        description: "`conflict`: the member kept changing while the sign-in was applied; sign in again.",
      },
      502: {
        ...errorResponses[400],
        description: "The provider's token endpoint or key set failed (`reason`).",
      },
    },
  },
  { countedPerIp: true },
);

export function registerOidcCallback(app: OpenAPIHono<AppEnv>) {
  app.openapi(oidcCallbackRoute, async (c) => {
    const query = c.req.valid("query");
    const origin = new URL(c.req.url).origin;
    // The pending request's cookie is spent either way.
    if (query.state) c.header("Set-Cookie", stateCookie(query.state, "", 0));
    c.header("Cache-Control", "no-store");
    const signedIn = await oidcCallback(c.get("ctx"), {
      institutionId: c.req.valid("param").id,
      query,
      origin,
      cookie: (state) => getCookie(c, STATE_COOKIE_PREFIX + state),
    });
    return c.redirect(`${origin}${LANDING_PATH}#code=${encodeURIComponent(signedIn.code)}`, 303);
  });
}
