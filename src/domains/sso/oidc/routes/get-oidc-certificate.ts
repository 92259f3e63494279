import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { validationError } from "../../../../platform/errors";
import { operationMiddleware, publicRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { INSTITUTIONS } from "../../prefixes";
import { institutionClientCertificate } from "../client-keys";
import { InstitutionParam } from "./schemas";

const CertificateQuery = z.object({
  kid: z.string().max(100).optional().openapi({
    description:
      "A key of the JWKS (`kid`): its certificate. Left out: the current key of the algorithm the assertions are signed with (RS256 unless the provider takes only ES256).",
    example: "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs",
  }),
});

export const getOidcCertificateRoute = publicRoute({
  method: "get",
  path: `${INSTITUTIONS}/{id}/sso/oidc/certificate`,
  tags: ["Institutions"],
  operationId: "getSsoOidcCertificate",
  summary: "The certificate of the institution's OIDC client key (PEM)",
  description:
    "A self-signed X.509 certificate of the institution's `private_key_jwt` client key (the same certificate as the key's `x5c` in `oidc.jwks_uri`), PEM-encoded, as a file to upload where the OpenID Provider takes a certificate rather than a key set URL: Microsoft Entra ID's app registration, *Certificates & secrets → Certificates → Upload certificate*. Each key's certificate is valid for 2 years from when it was made; after a rotation, upload the new key's certificate. The client assertion's header names the certificate by `x5t` (SHA-1 thumbprint, base64url) and `x5t#S256`, besides `kid`. No token: it is public, like the key set. Answered for an institution whose SSO connection is OIDC; otherwise 404, an unknown institution or `kid` included.",
  request: { params: InstitutionParam, query: CertificateQuery },
  responses: {
    200: {
      description: "The certificate (PEM), as a download.",
      headers: {
        "Content-Disposition": { schema: { type: "string" as const } },
        "Cache-Control": { schema: { type: "string" as const } },
      },
      content: { "application/x-pem-file": { schema: { type: "string" as const } } },
    },
    404: { ...errorResponses[404], description: "No OIDC connection, or no such key." },
    422: errorResponses[422],
  },
});

export function registerGetOidcCertificate(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(getOidcCertificateRoute);
  app.use(`${INSTITUTIONS}/:id/sso/oidc/certificate`, ...operationMiddleware(getOidcCertificateRoute));
  app.get(`${INSTITUTIONS}/:id/sso/oidc/certificate`, async (c) => {
    const query = CertificateQuery.safeParse(c.req.query());
    if (!query.success)
      throw validationError(
        query.error.issues.map((issue) => ({ path: issue.path.join(".") || "kid", message: issue.message })),
      );
    const institutionId = c.req.param("id");
    const { pem } = await institutionClientCertificate(c.get("ctx"), institutionId, query.data.kid);
    return c.body(pem, 200, {
      "Content-Type": "application/x-pem-file",
      "Content-Disposition": `attachment; filename="lingua-sso-${institutionId.replace(/[^A-Za-z0-9_-]/g, "")}.cer"`,
      "Cache-Control": "public, max-age=300",
    });
  });
}
