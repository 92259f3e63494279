import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { EVENT_TYPES, type EventType } from "../../platform/events";
import { EVENT_EXAMPLES } from "./catalogue";
import { USER_AGENT } from "./signing";

const header = (description: string, example: string) => z.string().openapi({ description, example });

const DeliveryHeaders = z.object({
  "X-Signature-256": header(
    "Lower-case hex HMAC-SHA256 of the raw body, keyed by the UTF-8 bytes of the whole secret (`whsec_…`). During a rotation: two digests, comma-separated, new first.",
    "3f1c9d…e07a",
  ),
  "X-Webhook-Id": header("The webhook.", "whk_01JD3Q8W2X4Y5Z6A7B8C9D0E1H"),
  "X-Webhook-Event": header("The event type.", "lesson.completed"),
  "X-Webhook-Delivery": header(
    "The delivery id; the same on every retry of one delivery.",
    "dlv_01JD3Q8W2X4Y5Z6A7B8C9D0E1N",
  ),
  "X-Webhook-Timestamp": header("Unix seconds of this attempt.", "1795300000"),
  "webhook-id": header("Standard Webhooks: the delivery id.", "dlv_01JD3Q8W2X4Y5Z6A7B8C9D0E1N"),
  "webhook-timestamp": header(
    "Standard Webhooks: Unix seconds of this attempt; reject old ones.",
    "1795300000",
  ),
  "webhook-signature": header(
    'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed by the base64-decoded part of the secret after `whsec_`; two space-separated entries during a rotation.',
    "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  ),
  "User-Agent": header("Our agent and version.", USER_AGENT),
});

/**
 * The deliveries we send, as OpenAPI 3.1 `webhooks`: one per event type, with its headers and an
 * example body, so generated clients and docs show receivers exactly what arrives.
 */
export function registerWebhookDocs(app: OpenAPIHono<AppEnv>) {
  for (const type of Object.keys(EVENT_TYPES) as EventType[]) {
    const body = z
      .object({
        id: z.string(),
        type: z.literal(type),
        created_at: z.string(),
        data: z.record(z.string(), z.unknown()),
      })
      .openapi({
        example: {
          id: "evt_01JD3Q8W2X4Y5Z6A7B8C9D0E1M",
          type,
          created_at: "2026-11-21T09:30:00Z",
          data: EVENT_EXAMPLES[type],
        },
      });
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: type,
      tags: ["Webhooks"],
      operationId: `webhook_${type.replace(/\./g, "_")}`,
      summary: type,
      description: `${EVENT_TYPES[type]} POSTed to every enabled webhook subscribed to \`${type}\`. Verify the signature over the raw body before trusting it.`,
      request: {
        headers: DeliveryHeaders,
        body: { required: true, content: { "application/json": { schema: body } } },
      },
      responses: {
        200: {
          description:
            "Any 2xx within 10 seconds acknowledges the delivery. Anything else (redirects included) is retried up to 3 times; `410` disables the webhook.",
        },
      },
    });
  }
}
