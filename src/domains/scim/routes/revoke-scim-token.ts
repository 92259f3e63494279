import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { ScimTokenParams } from "../schemas";
import { revokeScimToken } from "../tokens";

export const revokeScimTokenRoute = tokenRoute("sso:write", {
  method: "delete",
  path: `${INSTITUTIONS}/{id}/scim-tokens/{token}`,
  tags: ["Institutions"],
  operationId: "revokeScimToken",
  summary: "Revoke a SCIM token",
  description:
    "Takes effect at once: the identity provider's next SCIM request with it answers 401. Unknown, already revoked or another institution's token: 404.",
  request: { params: ScimTokenParams },
  responses: { 204: { description: "Revoked." } },
});

export function registerRevokeScimToken(app: OpenAPIHono<AppEnv>) {
  app.openapi(revokeScimTokenRoute, async (c) => {
    const { id, token } = c.req.valid("param");
    await revokeScimToken(principalContext(c), { institutionId: id, tokenId: token });
    return c.body(null, 204);
  });
}
