import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { healthOf } from "../health";
import { xapiScope } from "../policy";
import { XAPI_ENDPOINTS } from "../prefixes";
import { presentEndpoint } from "../present";
import { UpdateXapiEndpointBody, XapiEndpointIdParam, XapiEndpointSchema } from "../schemas";
import { updateEndpoint } from "../service";

const TAGS = ["xAPI"];

export const updateXapiEndpointRoute = tokenRoute("xapi:write", {
  method: "put",
  path: `${XAPI_ENDPOINTS}/{id}`,
  tags: TAGS,
  operationId: "updateXapiEndpoint",
  summary: "Replace a Learning Record Store's settings",
  description:
    "A full replacement, with the creation's body: a field left out takes its default (`version` `1.0.3`, every activity, `actor_format` `account`, `enabled` true), never its stored value. The secret (`auth.password`, `auth.client_secret`) may be left out to keep the stored one while `auth.type` and the identity (`username`; `token_url` and `client_id`) are unchanged; any other credentials change needs it (422). New credentials (or a new `endpoint`) apply to the very next request: a cached OAuth 2 token of the old ones is never used again. Statements already pending are sent with the new settings.",
  request: { params: XapiEndpointIdParam, body: jsonBody(UpdateXapiEndpointBody) },
  responses: { 200: jsonResponse(XapiEndpointSchema, "The endpoint.") },
});

export function registerUpdateXapiEndpoint(app: OpenAPIHono<AppEnv>) {
  app.openapi(updateXapiEndpointRoute, async (c) => {
    const ctx = principalContext(c);
    const row = await updateEndpoint(ctx, {
      ...xapiScope(ctx.principal),
      id: c.req.valid("param").id,
      input: c.req.valid("json"),
    });
    return c.json(presentEndpoint(row, await healthOf(ctx, row.id)), 200);
  });
}
