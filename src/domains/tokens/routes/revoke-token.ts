import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { tokenRoute } from "../../../platform/openapi";
import { TOKENS } from "../prefixes";
import { TokenIdParam } from "../schemas";
import { revokeToken } from "../service";

export const revokeTokenRoute = tokenRoute(
  "tokens:write",
  {
    method: "delete",
    path: `${TOKENS}/{token}`,
    tags: ["Tokens"],
    operationId: "revokeToken",
    summary: "Revoke an API token",
    description:
      "Takes effect at once: the very next request with the token answers 401. Any token may revoke itself (sign out: its id is `token.id` of `GET /api/auth/me`), with or without `tokens:write`, an LTI launch session too; another token needs the ability. Unknown, already revoked or another institution's token: 404.",
    request: { params: TokenIdParam },
    responses: { 204: { description: "Revoked." } },
  },
  {
    exempt: (c) => c.req.param("token") === c.var.principal.token.id,
    exemption: "except to revoke the calling token itself (sign out)",
  },
);

export function registerRevokeToken(app: OpenAPIHono<AppEnv>) {
  app.openapi(revokeTokenRoute, async (c) => {
    await revokeToken(principalContext(c), c.req.valid("param").token);
    return c.body(null, 204);
  });
}
