import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { jsonResponse, publicRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { LTI } from "../../prefixes";
import { IdParam } from "../../schemas";
import { JwksSchema } from "../schemas";
import { registrationKeys } from "../signing-keys";

export const getLtiJwksRoute = publicRoute({
  method: "get",
  path: `${LTI}/jwks/{id}`,
  tags: ["LTI"],
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

export function registerGetLtiJwks(app: OpenAPIHono<AppEnv>) {
  app.openapi(getLtiJwksRoute, async (c) => {
    const keys = await registrationKeys(c.get("ctx"), c.req.valid("param").id);
    c.header("Cache-Control", "public, max-age=300");
    return c.json({ keys }, 200);
  });
}
