import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { INSTITUTIONS } from "../../prefixes";
import { PutSsoBody, SsoParams, SsoSchema } from "../schemas";
import { putSso } from "../service";

export const putSsoRoute = tokenRoute("sso:write", {
  method: "put",
  path: `${INSTITUTIONS}/{id}/sso`,
  tags: ["Institutions"],
  operationId: "putSsoSettings",
  summary: "Update SSO settings",
  description: `Replaces the institution's SSO connection. Give \`type\` and the matching object (\`saml\` or \`oidc\`; the other left out).

- **SAML**: \`idp_entity_id\`, \`sso_url\` (https), \`certificates\` (PEM), \`attribute_mapping\`; or \`metadata_xml\` (the IdP's metadata document) or \`metadata_url\` (fetched now) to fill the fields you leave out.
- **OIDC**: \`issuer\` (its \`/.well-known/openid-configuration\` is fetched now and must name the same issuer), \`client_id\`, \`client_secret\` (write-only; leave it out to keep the stored one), \`scopes\` (must include \`openid\`), \`claim_mapping\`.

**Domains** route members to this connection only once verified: each is answered in \`domain_verifications\` with the TXT record that proves it (see \`POST /api/institutions/{id}/sso/domains/{domain}/verify\`). Another institution may claim the same domain; that is neither refused nor mentioned. A domain kept in a later PUT keeps its token and status; one left out loses them; added again, it starts \`pending\` with a new token.

A draft may be incomplete; \`state: "active"\` needs a complete configuration and at least one domain, \`enforced\` needs \`active\`. 422, naming the field, for: a malformed, expired or not yet valid certificate; a URL that is not https or points at a private address; an issuer or metadata URL that cannot be fetched or whose discovery document names another issuer, or an \`authorization_endpoint\`, \`token_endpoint\` or \`jwks_uri\` that does not pass the same outbound rules (on \`oidc.issuer\`, naming the document's field); a public e-mail provider's domain (gmail.com, outlook.com, …: \`domains.1\`). Nothing is written unless everything passes.`,
  request: { params: SsoParams, body: jsonBody(PutSsoBody) },
  responses: { 200: jsonResponse(SsoSchema, "The SSO settings as stored.") },
});

export function registerPutSso(app: OpenAPIHono<AppEnv>) {
  app.openapi(putSsoRoute, async (c) => {
    const body = await putSso(principalContext(c), {
      institutionId: c.req.valid("param").id,
      origin: new URL(c.req.url).origin,
      input: c.req.valid("json"),
    });
    return c.json(body, 200);
  });
}
