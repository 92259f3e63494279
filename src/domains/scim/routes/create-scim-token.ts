import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { INSTITUTIONS } from "../prefixes";
import { presentScimToken, scimBaseUrl } from "../present";
import { CreatedScimTokenSchema, CreateScimTokenBody, InstitutionParams } from "../schemas";
import { issueScimToken, SCIM_TOKEN_LIMIT } from "../tokens";

export const createScimTokenRoute = tokenRoute("sso:write", {
  method: "post",
  path: `${INSTITUTIONS}/{id}/scim-tokens`,
  tags: ["Institutions"],
  operationId: "createScimToken",
  summary: "Issue a SCIM token",
  description: `A bearer token for the institution's identity provider (Okta, Microsoft Entra) to provision members through SCIM 2.0 at \`scim_base_url\`: the token decides the institution. The plain value is in this response only; only its SHA-256 is stored. An institution holds at most ${SCIM_TOKEN_LIMIT} live SCIM tokens (409 \`conflict\` beyond). Another institution's id: 404.`,
  middleware: [idempotent],
  request: {
    params: InstitutionParams,
    headers: z.object(idempotencyHeaderShape),
    body: jsonBody(CreateScimTokenBody),
  },
  responses: {
    201: jsonResponse(CreatedScimTokenSchema, "The token, with its plain value."),
    409: errorResponses[409],
  },
});

export function registerCreateScimToken(app: OpenAPIHono<AppEnv>) {
  app.openapi(createScimTokenRoute, async (c) => {
    const institutionId = c.req.valid("param").id;
    const { row, plain } = await issueScimToken(principalContext(c), {
      institutionId,
      name: c.req.valid("json").name,
    });
    const origin = new URL(c.req.url).origin;
    c.header("Location", `${origin}${INSTITUTIONS}/${institutionId}/scim-tokens`);
    return c.json({ ...presentScimToken(row), token: plain, scim_base_url: scimBaseUrl(origin) }, 201);
  });
}
