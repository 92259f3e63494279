import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { ApiError } from "../../../platform/errors";
import { jsonResponse, publicRoute, tokenRoute } from "../../../platform/openapi";
import { publishedKeys, rotateKeys } from "../keys";
import { LTI, LTI_KEYS } from "../prefixes";
import { JwksSchema, RotatedKeysSchema } from "../schemas";

const TAGS = ["LTI"];

const jwksRoute = publicRoute({
  method: "get",
  path: `${LTI}/jwks`,
  tags: TAGS,
  operationId: "getLtiJwks",
  summary: "The tool's public keys (JWKS)",
  description:
    "The RS256 keys the tool signs with (client assertions at a platform's token endpoint), current key first; a key rotated out stays listed for 7 days. Paste this URL into the platform as the tool's public keyset. Cacheable for 5 minutes.",
  responses: { 200: jsonResponse(JwksSchema, "The key set.") },
});

const rotateRoute = tokenRoute("lti:write", {
  method: "post",
  path: `${LTI_KEYS}/rotate`,
  tags: TAGS,
  operationId: "rotateLtiKeys",
  summary: "Rotate the tool's signing key (platform staff)",
  description:
    "Makes a new key current at once; the previous one stays in the JWKS for 7 days so platforms that cached it keep verifying. Platform staff only (403 for anybody else).",
  responses: { 200: jsonResponse(RotatedKeysSchema, "The keys after the rotation.") },
});

export function registerKeyRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(jwksRoute, async (c) => {
    const keys = await publishedKeys(c.env);
    c.header("Cache-Control", "public, max-age=300");
    return c.json({ keys }, 200);
  });

  app.openapi(rotateRoute, async (c) => {
    if (c.var.principal.user.role !== "platform_admin")
      throw new ApiError("forbidden", "Only platform staff may rotate the LTI tool keys.");
    const { current, retired } = await rotateKeys(c.env);
    return c.json(
      {
        current_kid: current.id,
        retired_kid: retired?.id ?? null,
        retired_key_published_until: retired?.publishedUntil ?? null,
        keys: await publishedKeys(c.env),
      },
      200,
    );
  });
}
