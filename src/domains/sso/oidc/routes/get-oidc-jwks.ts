import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { jsonResponse, publicRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { INSTITUTIONS } from "../../prefixes";
import { institutionClientKeys } from "../client-keys";
import { InstitutionParam, SsoJwksSchema } from "./schemas";

export const getOidcJwksRoute = publicRoute({
  method: "get",
  path: `${INSTITUTIONS}/{id}/sso/oidc/jwks`,
  tags: ["Institutions"],
  operationId: "getSsoOidcJwks",
  summary: "The institution's OIDC client keys (JWKS)",
  description:
    "The public keys Lingua signs the institution's `private_key_jwt` client assertions with (RFC 7523), current key first; a key rotated out stays listed for 7 days. The SSO settings announce this URL as `oidc.jwks_uri`: register it at the OpenID Provider as the client's key set URL. Keys are the institution's own, generated on first need (RS256, or ES256 when the provider accepts only that). Each key carries its self-signed X.509 certificate (`x5c`) and the certificate's thumbprints (`x5t`, SHA-1; `x5t#S256`), for providers that take certificates (Microsoft Entra ID: upload the PEM of `…/sso/oidc/certificate`). No token: the provider fetches it. Answered for an institution whose SSO connection is OIDC, in any state; otherwise 404, an unknown institution included. Cacheable for 5 minutes.",
  request: { params: InstitutionParam },
  responses: {
    200: jsonResponse(SsoJwksSchema, "The key set."),
    404: { ...errorResponses[404], description: "No OIDC connection for this institution." },
  },
});

export function registerGetOidcJwks(app: OpenAPIHono<AppEnv>) {
  app.openapi(getOidcJwksRoute, async (c) => {
    const keys = await institutionClientKeys(c.get("ctx"), c.req.valid("param").id);
    c.header("Cache-Control", "public, max-age=300");
    return c.json({ keys }, 200);
  });
}
