import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { xapiScope } from "../policy";
import { XAPI_ENDPOINTS } from "../prefixes";
import { presentEndpoint } from "../present";
import { CreateXapiEndpointBody, XapiEndpointSchema } from "../schemas";
import { createEndpoint } from "../service";

const TAGS = ["xAPI"];

export const createXapiEndpointRoute = tokenRoute("xapi:write", {
  method: "post",
  path: XAPI_ENDPOINTS,
  tags: TAGS,
  operationId: "createXapiEndpoint",
  summary: "Register a Learning Record Store",
  description:
    "Registers an LRS that the institution's learning activity is forwarded to as xAPI statements. The `endpoint` and an OAuth 2 `token_url` must pass the outbound URL rules (422 naming the field otherwise). The secret (`password` or `client_secret`) is stored encrypted and never returned: the answer's `auth` says `secret_set: true`. Check the connection with `POST …/{id}/test`. At most 10 endpoints per institution (409 beyond).",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateXapiEndpointBody) },
  responses: { 201: jsonResponse(XapiEndpointSchema, "The endpoint.") },
});

export function registerCreateXapiEndpoint(app: OpenAPIHono<AppEnv>) {
  app.openapi(createXapiEndpointRoute, async (c) => {
    const ctx = principalContext(c);
    const row = await createEndpoint(ctx, {
      owner: { ...xapiScope(ctx.principal), userId: ctx.principal.user.id },
      input: c.req.valid("json"),
    });
    c.header("Location", new URL(`${XAPI_ENDPOINTS}/${row.id}`, c.req.url).toString());
    return c.json(presentEndpoint(row, { sent: 0, failed: 0, pending: 0 }), 201);
  });
}
