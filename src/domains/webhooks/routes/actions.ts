import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv, Env } from "../../../env";
import { requireInstitution } from "../../../platform/auth/principal";
import { config } from "../../../platform/config";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, optionalJsonBody, tokenRoute } from "../../../platform/openapi";
import { limiterFor, rateLimitedError } from "../../../platform/ratelimit/middleware";
import { sendTestPing } from "../delivery-service";
import { presentWebhook } from "../present";
import { DeliverySchema, RotateSecretBody, WebhookIdParam, WebhookWithSecretSchema } from "../schemas";
import { findWebhook, rotateSecret } from "../service";

const TAGS = ["Webhooks"];

/** Test pings per webhook per rate-limit window (a minute): each one is a request to the receiver. */
export const TEST_PING_POLICY = { name: "webhook-test", limit: 10 } as const;

/** Counts one test ping of the webhook in its own RateLimiter object; 429 once over the limit. */
async function limitTestPings(env: Env, webhookId: string): Promise<void> {
  const decision = await limiterFor(env, `webhook:${TEST_PING_POLICY.name}:${webhookId}`).consume(
    TEST_PING_POLICY.limit,
    config(env).rateLimitWindowSeconds,
  );
  if (!decision.allowed)
    throw rateLimitedError(decision, "test pings of this webhook", TEST_PING_POLICY.name);
}

export const testWebhookRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: "/api/integrations/webhooks/{id}/test",
  tags: TAGS,
  operationId: "testWebhook",
  summary: "Send a test ping",
  description:
    "Sends a signed `ping` event now and answers with the delivery record once the receiver has answered (or timed out): `status` is `succeeded` or `failed`, with the response status, duration and error. Works on a disabled webhook too. A ping is tried once, never retried, and never counts towards the webhook's health; the URL passes the outbound rules again first (`error_code: target_refused` and the webhook disabled if it no longer does). At most 10 pings per webhook a minute: the 11th answers `429` with `Retry-After` and the `RateLimit` headers of the `webhook-test` policy.",
  request: { params: WebhookIdParam },
  responses: { 200: jsonResponse(DeliverySchema, "The ping's delivery record.") },
});

export const rotateSecretRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: "/api/integrations/webhooks/{id}/rotate-secret",
  tags: TAGS,
  operationId: "rotateWebhookSecret",
  summary: "Rotate the signing secret",
  description:
    "Issues a new secret, shown in this response only. The old one keeps signing beside it for `previous_secret_ttl_seconds` (default 24 hours): meanwhile `X-Signature-256` carries two hex digests separated by a comma, new first, and `webhook-signature` two space-separated `v1,` entries. Deploy the new secret to your receiver within that window.",
  request: { params: WebhookIdParam, body: optionalJsonBody(RotateSecretBody) },
  responses: { 200: jsonResponse(WebhookWithSecretSchema, "The webhook, with its new secret.") },
});

export function registerWebhookActions(app: OpenAPIHono<AppEnv>) {
  app.openapi(testWebhookRoute, async (c) => {
    const webhook = await findWebhook(c.env, requireInstitution(c.var.principal).id, c.req.valid("param").id);
    await limitTestPings(c.env, webhook.id);
    return c.json(await sendTestPing(principalContext(c), webhook), 200);
  });

  app.openapi(rotateSecretRoute, async (c) => {
    const body = c.req.valid("json") ?? {};
    const { row, secret } = await rotateSecret(
      c.env,
      requireInstitution(c.var.principal).id,
      c.req.valid("param").id,
      body.previous_secret_ttl_seconds ?? 86_400,
    );
    return c.json({ ...presentWebhook(row), secret }, 200);
  });
}
