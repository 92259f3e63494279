import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { limiterFor, rateLimitedError } from "../../../platform/ratelimit/middleware";
import type { ServiceContext } from "../../../platform/service/context";
import { xapiScope } from "../policy";
import { XAPI_ENDPOINTS } from "../prefixes";
import { XapiEndpointIdParam, XapiTestResultSchema } from "../schemas";
import { findEndpoint } from "../service";
import { testEndpoint } from "../test-call";

const TAGS = ["xAPI"];

/** Test calls per endpoint per rate-limit window (a minute): each one is two or three requests to the LRS. */
export const TEST_CALL_POLICY = { name: "xapi-test", limit: 10 } as const;

export async function limitTestCalls(ctx: ServiceContext, endpointId: string): Promise<void> {
  const decision = await limiterFor(ctx.env, `xapi:${TEST_CALL_POLICY.name}:${endpointId}`).consume(
    TEST_CALL_POLICY.limit,
    ctx.config.rateLimitWindowSeconds,
  );
  if (!decision.allowed)
    throw rateLimitedError(decision, "test calls of this endpoint", TEST_CALL_POLICY.name);
}

export const testXapiEndpointRoute = tokenRoute("xapi:write", {
  method: "post",
  path: `${XAPI_ENDPOINTS}/{id}/test`,
  tags: TAGS,
  operationId: "testXapiEndpoint",
  summary: "Test the connection to a Learning Record Store",
  description:
    "Calls the LRS now — `GET {endpoint}about` without credentials, and `GET {endpoint}statements?limit=1` with them (after the token request, for OAuth 2) — and answers `200` with what it said, whatever it said: whether it answered, the xAPI versions it supports, and whether it accepted the credentials. Sends no statement and works on a disabled endpoint too. At most 10 test calls per endpoint a minute: the 11th answers `429` with `Retry-After` and the `RateLimit` headers of the `xapi-test` policy.",
  request: { params: XapiEndpointIdParam },
  responses: { 200: jsonResponse(XapiTestResultSchema, "What the LRS answered.") },
});

export function registerTestXapiEndpoint(app: OpenAPIHono<AppEnv>) {
  app.openapi(testXapiEndpointRoute, async (c) => {
    const ctx = principalContext(c);
    const endpoint = await findEndpoint(ctx, { ...xapiScope(ctx.principal), id: c.req.valid("param").id });
    await limitTestCalls(ctx, endpoint.id);
    return c.json(await testEndpoint(ctx, endpoint), 200);
  });
}
