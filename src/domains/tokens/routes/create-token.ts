import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { TOKENS } from "../prefixes";
import { presentToken } from "../present";
import { CreatedTokenSchema, CreateTokenBody } from "../schemas";
import { API_TOKEN_LIMIT, createApiToken } from "../service";

export const createTokenRoute = tokenRoute("tokens:write", {
  method: "post",
  path: TOKENS,
  tags: ["Tokens"],
  operationId: "createToken",
  summary: "Create an API token",
  description: `The plain value is in this response only. A token can hold only abilities its owner's role allows (403 otherwise) and never more than the token that creates it. A user holds at most ${API_TOKEN_LIMIT} active API tokens: the next answers 409 \`token_limit_reached\`.`,
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateTokenBody) },
  responses: {
    201: jsonResponse(CreatedTokenSchema, "The token, with its plain value."),
    409: errorResponses[409],
  },
});

export function registerCreateToken(app: OpenAPIHono<AppEnv>) {
  app.openapi(createTokenRoute, async (c) => {
    const { row, plain } = await createApiToken(principalContext(c), c.req.valid("json"));
    c.header("Location", new URL(`/api/integrations/tokens/${row.id}`, c.req.url).toString());
    return c.json({ ...presentToken(row), token: plain }, 201);
  });
}
