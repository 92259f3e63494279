import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { limiterFor, rateLimitedError } from "../../../platform/ratelimit/middleware";
import type { ServiceContext } from "../../../platform/service/context";
import { sendTestPing } from "../delivery-service";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { DeliverySchema, WebhookIdParam } from "../schemas";
import { findWebhook } from "../service";

const TAGS = ["Webhooks"];

/** Test pings per webhook per rate-limit window (a minute): each one is a request to the receiver. */
export const TEST_PING_POLICY = { name: "webhook-test", limit: 10 } as const;

/** Counts one test ping of the webhook in its own RateLimiter object; 429 once over the limit. */
export async function limitTestPings(ctx: ServiceContext, webhookId: string): Promise<void> {
  const decision = await limiterFor(ctx.env, `webhook:${TEST_PING_POLICY.name}:${webhookId}`).consume(
    TEST_PING_POLICY.limit,
    ctx.config.rateLimitWindowSeconds,
  );
  if (!decision.allowed)
    throw rateLimitedError(decision, "test pings of this webhook", TEST_PING_POLICY.name);
}

export const testWebhookRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: `${WEBHOOKS}/{id}/test`,
  tags: TAGS,
  operationId: "testWebhook",
  summary: "Send a test ping",
  description:
    "Sends a signed `ping` event now and answers with the delivery record once the receiver has answered (or timed out): `status` is `succeeded` or `failed`, with the response status, duration and error. Works on a disabled webhook too. A ping is tried once, never retried, and never counts towards the webhook's health; the URL passes the outbound rules again first (`error_code: target_refused` and the webhook disabled if it no longer does). At most 10 pings per webhook a minute: the 11th answers `429` with `Retry-After` and the `RateLimit` headers of the `webhook-test` policy.",
  request: { params: WebhookIdParam },
  responses: { 200: jsonResponse(DeliverySchema, "The ping's delivery record.") },
});

export function registerTestWebhook(app: OpenAPIHono<AppEnv>) {
  app.openapi(testWebhookRoute, async (c) => {
    const ctx = principalContext(c);
    const webhook = await findWebhook(ctx, { ...webhookScope(ctx.principal), id: c.req.valid("param").id });
    await limitTestPings(ctx, webhook.id);
    return c.json(await sendTestPing(ctx, webhook), 200);
  });
}
