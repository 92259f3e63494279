import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, optionalJsonBody, tokenRoute } from "../../../platform/openapi";
import { webhookScope } from "../policy";
import { WEBHOOKS } from "../prefixes";
import { presentWebhook } from "../present";
import { RotateSecretBody, WebhookIdParam, WebhookWithSecretSchema } from "../schemas";
import { rotateSecret } from "../service";

const TAGS = ["Webhooks"];

export const rotateSecretRoute = tokenRoute("webhooks:write", {
  method: "post",
  path: `${WEBHOOKS}/{id}/rotate-secret`,
  tags: TAGS,
  operationId: "rotateWebhookSecret",
  summary: "Rotate the signing secret",
  description:
    "Issues a new secret, shown in this response only. The old one keeps signing beside it for `previous_secret_ttl_seconds` (default 24 hours): meanwhile `X-Signature-256` carries two hex digests separated by a comma, new first, and `webhook-signature` two space-separated `v1,` entries. Deploy the new secret to your receiver within that window.",
  request: { params: WebhookIdParam, body: optionalJsonBody(RotateSecretBody) },
  responses: { 200: jsonResponse(WebhookWithSecretSchema, "The webhook, with its new secret.") },
});

export function registerRotateSecret(app: OpenAPIHono<AppEnv>) {
  app.openapi(rotateSecretRoute, async (c) => {
    const ctx = principalContext(c);
    const body = c.req.valid("json") ?? {};
    const { row, secret } = await rotateSecret(ctx, {
      ...webhookScope(ctx.principal),
      id: c.req.valid("param").id,
      previousTtlSeconds: body.previous_secret_ttl_seconds ?? 86_400,
    });
    return c.json({ ...presentWebhook(row, ctx.now()), secret }, 200);
  });
}
