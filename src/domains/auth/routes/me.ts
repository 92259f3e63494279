import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { windowSecondsFrom } from "../../../platform/ratelimit/policies";
import { presentUser } from "../present";
import { MeSchema } from "../schemas";

export const meRoute = tokenRoute(null, {
  method: "get",
  path: "/api/auth/me",
  tags: ["Authentication"],
  operationId: "getMe",
  summary: "Who am I",
  description: "The token's user, role, institution, plan, rate limit and abilities. Served from the token's cache: no database query.",
  responses: { 200: jsonResponse(MeSchema, "The caller.") },
});

export function registerMe(app: OpenAPIHono<AppEnv>) {
  app.openapi(meRoute, (c) => {
    const { user, institution, token, rateLimitPerMinute } = c.var.principal;
    return c.json(
      {
        user: presentUser({ ...user, institutionId: institution?.id ?? null }),
        institution,
        plan: institution?.plan ?? ("platform" as const),
        rate_limit: { limit: rateLimitPerMinute, window_seconds: windowSecondsFrom(c.env) },
        token: { id: token.id, name: token.name, kind: token.kind, abilities: token.abilities, expires_at: token.expiresAt },
      },
      200,
    );
  });
}
