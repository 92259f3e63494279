import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { INSTITUTIONS } from "../../prefixes";
import { SsoParams, SsoSchema } from "../schemas";
import { readSso } from "../service";

export const getSsoRoute = tokenRoute("sso:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/sso`,
  tags: ["Institutions"],
  operationId: "getSsoSettings",
  summary: "SSO configuration (SAML or OIDC)",
  description:
    "The institution's single sign-on connection: SAML 2.0 (with each signing certificate's subject, validity, SHA-256 fingerprint and whether it has expired, and our service-provider values to enter at the IdP) or OpenID Connect (the client secret only as `client_secret_set`, and our `redirect_uri`). Before anything is configured: `type: null`, `state: \"inactive\"`. Another institution's id: 404.",
  request: { params: SsoParams },
  responses: { 200: jsonResponse(SsoSchema, "The SSO settings.") },
});

export function registerGetSso(app: OpenAPIHono<AppEnv>) {
  app.openapi(getSsoRoute, async (c) => {
    const body = await readSso(principalContext(c), {
      institutionId: c.req.valid("param").id,
      origin: new URL(c.req.url).origin,
    });
    return c.json(body, 200);
  });
}
