import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { ApiError } from "../../../../platform/errors";
import { errorResponses, jsonResponse, publicRoute, tokenRoute } from "../../../../platform/openapi";
import { LTI, LTI_CONSUMERS } from "../../prefixes";
import { IdParam, JwksSchema, RotatedKeysSchema } from "../../schemas";
import { consumerById, findManagedConsumer } from "../service";
import { publishedKeys, rotateKeys } from "../signing-keys";

const TAGS = ["LTI"];

const jwksRoute = publicRoute({
  method: "get",
  path: `${LTI}/jwks/{id}`,
  tags: TAGS,
  operationId: "getLtiJwks",
  summary: "A registration's public keys (JWKS)",
  description:
    "The RS256 keys the registration signs its client assertions with (at its platform's token endpoint), current key first; a key rotated out stays listed for 7 days. Each registration has its own keys, generated on first need: paste the registration's `tool.jwks_url` (this URL) into that platform as the tool's public keyset. Unknown registration: 404. Cacheable for 5 minutes.",
  request: { params: IdParam },
  responses: {
    200: jsonResponse(JwksSchema, "The key set."),
    404: errorResponses[404],
  },
});

const rotateRoute = tokenRoute("lti:write", {
  method: "post",
  path: `${LTI_CONSUMERS}/{id}/keys/rotate`,
  tags: TAGS,
  operationId: "rotateLtiKeys",
  summary: "Rotate a registration's signing key",
  description:
    "Makes a new key the registration's current one at once; the previous one stays in the registration's JWKS for 7 days so a platform that cached it keeps verifying. Other registrations' keys do not change. The registration's institution admins and platform staff; another institution's registration: 404.",
  request: { params: IdParam },
  responses: { 200: jsonResponse(RotatedKeysSchema, "The registration's keys after the rotation.") },
});

export function registerKeyRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(jwksRoute, async (c) => {
    const { id } = c.req.valid("param");
    const consumer = await consumerById(c.env, id);
    if (!consumer) throw new ApiError("not_found", `No LTI registration ${id}.`);
    const keys = await publishedKeys(c.env, consumer.id);
    c.header("Cache-Control", "public, max-age=300");
    return c.json({ keys }, 200);
  });

  app.openapi(rotateRoute, async (c) => {
    const consumer = await findManagedConsumer(c.env, c.var.principal, c.req.valid("param").id);
    const { current, retired } = await rotateKeys(c.env, consumer.id);
    return c.json(
      {
        current_kid: current.id,
        retired_kid: retired?.id ?? null,
        retired_key_published_until: retired?.publishedUntil ?? null,
        keys: await publishedKeys(c.env, consumer.id),
      },
      200,
    );
  });
}
