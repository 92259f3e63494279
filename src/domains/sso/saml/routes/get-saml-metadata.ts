import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { operationMiddleware, publicRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { INSTITUTIONS } from "../../../institutions/prefixes";
import { samlMetadata } from "../service";

const Params = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "ins_acme" }),
});

export const getSamlMetadataRoute = publicRoute({
  method: "get",
  path: `${INSTITUTIONS}/{id}/sso/saml/metadata`,
  tags: ["Institutions"],
  operationId: "getSamlSpMetadata",
  summary: "Our SAML 2.0 service-provider metadata",
  description:
    'The SAML 2.0 metadata of Lingua as the institution\'s service provider, for the IdP\'s administrator to upload or point the IdP at (the SSO settings announce it as `saml.sp.metadata_url`; its own URL is our entity id). An `EntityDescriptor` with `entityID` (= `saml.sp.entity_id`), an `SPSSODescriptor` with `AuthnRequestsSigned="false"` (our requests are not signed), `WantAssertionsSigned="true"`, the NameID formats we take (`emailAddress`, `persistent`, `unspecified`) and the `AssertionConsumerService` (HTTP-POST binding, `Location` = `saml.sp.acs_url`). No token: the IdP fetches it. Answered for an institution whose SSO connection is SAML, in any state; otherwise 404, an unknown institution included. Cacheable for an hour.',
  request: { params: Params },
  responses: {
    200: {
      description: "The metadata document.",
      headers: { "Cache-Control": { schema: { type: "string" as const } } },
      content: { "application/samlmetadata+xml": { schema: { type: "string" as const } } },
    },
    404: { ...errorResponses[404], description: "No SAML connection for this institution." },
  },
});

export function registerGetSamlMetadata(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(getSamlMetadataRoute);
  app.use(`${INSTITUTIONS}/:id/sso/saml/metadata`, ...operationMiddleware(getSamlMetadataRoute));
  app.get(`${INSTITUTIONS}/:id/sso/saml/metadata`, async (c) => {
    const xml = await samlMetadata(c.get("ctx"), {
      institutionId: c.req.param("id"),
      origin: new URL(c.req.url).origin,
    });
    return c.body(xml, 200, {
      "Content-Type": "application/samlmetadata+xml; charset=utf-8",
      "Cache-Control": "public, max-age=3600",
    });
  });
}
