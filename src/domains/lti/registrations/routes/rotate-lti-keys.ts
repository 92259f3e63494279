import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { LTI_CONSUMERS } from "../../prefixes";
import { IdParam } from "../../schemas";
import { RotatedKeysSchema } from "../schemas";
import { rotateRegistrationKeys } from "../signing-keys";

export const rotateLtiKeysRoute = tokenRoute("lti:write", {
  method: "post",
  path: `${LTI_CONSUMERS}/{id}/keys/rotate`,
  tags: ["LTI"],
  operationId: "rotateLtiKeys",
  summary: "Rotate a registration's signing key",
  description:
    "Makes a new key the registration's current one at once; the previous one stays in the registration's JWKS for 7 days so a platform that cached it keeps verifying. Other registrations' keys do not change. The registration's institution admins and platform staff; another institution's registration: 404.",
  request: { params: IdParam },
  responses: { 200: jsonResponse(RotatedKeysSchema, "The registration's keys after the rotation.") },
});

export function registerRotateLtiKeys(app: OpenAPIHono<AppEnv>) {
  app.openapi(rotateLtiKeysRoute, async (c) => {
    const { current, retired, keys } = await rotateRegistrationKeys(
      principalContext(c),
      c.req.valid("param").id,
    );
    return c.json(
      {
        current_kid: current.id,
        retired_kid: retired?.id ?? null,
        retired_key_published_until: retired?.publishedUntil ?? null,
        keys,
      },
      200,
    );
  });
}
