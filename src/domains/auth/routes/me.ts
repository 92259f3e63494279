import type { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import type { Principal } from "../../../platform/auth/principal";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { AUTH } from "../prefixes";
import { presentUser } from "../present";
import { MeSchema } from "../schemas";

const JSON_CONTENT_TYPE = { "Content-Type": "application/json" };

export const meRoute = tokenRoute(null, {
  method: "get",
  path: `${AUTH}/me`,
  tags: ["Authentication"],
  operationId: "getMe",
  summary: "Who am I",
  description:
    "The token's user, role, institution, plan, rate limit and abilities: `token.abilities` as the token was granted (`[\"*\"]` for a session, as the token list shows it), `token.effective_abilities` what this request may do (check that one). Served from the token's cache: no database query.",
  responses: { 200: jsonResponse(MeSchema, "The caller.") },
});

/**
 * `me` answers from the principal alone, and the authentication middleware keeps one principal
 * object per token version, so the body is serialised once per version rather than per request.
 */
const bodies = new WeakMap<Principal, { windowSeconds: number; json: string }>();

function meBody(principal: Principal, windowSeconds: number): string {
  const cached = bodies.get(principal);
  if (cached?.windowSeconds === windowSeconds) return cached.json;
  const { user, institution, token, rateLimitPerMinute } = principal;
  const body: z.infer<typeof MeSchema> = {
    user: presentUser({ ...user, institutionId: institution?.id ?? null }),
    institution,
    plan: institution?.plan ?? "platform",
    rate_limit: { limit: rateLimitPerMinute, window_seconds: windowSeconds },
    token: {
      id: token.id,
      name: token.name,
      kind: token.kind,
      abilities: token.granted,
      effective_abilities: token.abilities,
      expires_at: token.expiresAt,
    },
  };
  const json = JSON.stringify(body);
  bodies.set(principal, { windowSeconds, json });
  return json;
}

export function registerMe(app: OpenAPIHono<AppEnv>) {
  // c.body, not c.json: the JSON is serialised already (typed against MeSchema in meBody).
  app.openapi(
    meRoute,
    (c) =>
      c.body(
        meBody(c.get("principal"), c.get("ctx").config.rateLimitWindowSeconds),
        200,
        JSON_CONTENT_TYPE,
      ) as never,
  );
}
