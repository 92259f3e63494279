import { z } from "@hono/zod-openapi";
import { DELIVERY_STATUSES } from "../../db/schema";
import { DATE_TIME_BOUNDS_NOTE, dateTime } from "../../platform/dates";
import { EVENT_TYPES, SUBSCRIBABLE_TYPES } from "../../platform/events";
import { pageQueryShape, pageSchema } from "../../platform/http/pagination";
import { MAX_URL_LENGTH, OUTBOUND_ERROR_CODES } from "../../platform/outbound";
import { displayText } from "../../platform/text";

export const MAX_WEBHOOKS_PER_INSTITUTION = 20;

export const DISABLED_REASONS = ["manual", "too_many_failures", "gone", "target_refused"] as const;

const ErrorCode = z.enum(OUTBOUND_ERROR_CODES).nullable().openapi({
  description:
    "The failure's category, null on success: `timeout` (no full answer within the time-out), `connection_failed`, `tls` (handshake or certificate), `dns` (the host name did not resolve), `redirect` (a 3xx; redirects are not followed), `http_status` (any other non-2xx), `target_refused` (the URL no longer passes the outbound rules; nothing was sent and the webhook was disabled).",
  example: "http_status",
});

const EventTypeName = z
  .string()
  .refine((value) => value === "*" || (SUBSCRIBABLE_TYPES as string[]).includes(value), {
    message: `must be \`*\` or one of ${SUBSCRIBABLE_TYPES.join(", ")}`,
  })
  .openapi({ example: "lesson.completed" });

const EventsList = z
  .array(EventTypeName)
  .min(1, "must list at least one event type, or `*`")
  .max(SUBSCRIBABLE_TYPES.length + 1)
  .openapi({
    description:
      'Event types to receive, or `["*"]` for all of them (including types added later). `ping` is sent by the test endpoint whatever this says.',
  });

const Url = z.string().max(MAX_URL_LENGTH).openapi({
  example: "https://hooks.acme.example/lingua",
  description:
    "Absolute `https` URL without credentials or fragment. Private, loopback, link-local, metadata, carrier-grade NAT and other reserved addresses are refused in every form (IPv6 forms that carry an IPv4 address are judged by that address), as are `localhost`, `*.local`, `*.internal` and single-label names, and a host name that resolves to such an address (the deployment's DNS-over-HTTPS resolver is asked at save time and before every delivery). The URL is checked again before every delivery. Only local development (`ALLOW_LOOPBACK_TARGETS`) admits `http` and loopback addresses.",
});

const Description = displayText({ max: 500, min: 0 }).nullable();

export const WebhookSchema = z
  .object({
    id: z.string().openapi({ example: "whk_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()).openapi({ example: ["lesson.completed", "course.completed"] }),
    enabled: z.boolean(),
    disabled_reason: z.enum(DISABLED_REASONS).nullable().openapi({
      description:
        "Why the webhook is off: `manual` (a PUT), `too_many_failures` (automatic), `gone` (the receiver answered 410), `target_refused` (its URL no longer passes the outbound rules, checked before every delivery; change the URL and re-enable it). Null while enabled.",
    }),
    disabled_at: z.string().nullable(),
    consecutive_failures: z
      .number()
      .int()
      .openapi({ description: "Events in a row whose delivery ended `failed`; reset by any success." }),
    failing_since: z.string().nullable(),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .openapi({ description: "During a rotation: when the previous secret stops signing." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Webhook");

export const WebhookHealthSchema = z
  .object({
    window_hours: z.number().int().openapi({ example: 24 }),
    succeeded: z.number().int(),
    failed: z.number().int(),
    pending: z.number().int().openapi({ description: "Pending or retrying." }),
    success_rate: z.number().nullable().openapi({
      description: "succeeded / (succeeded + failed) over the window; null without finished deliveries.",
      example: 0.98,
    }),
    last_delivery_at: z.string().nullable(),
    last_success_at: z.string().nullable(),
    last_failure_at: z.string().nullable(),
  })
  .openapi("WebhookHealth");

export const WebhookWithHealthSchema = WebhookSchema.extend({ health: WebhookHealthSchema }).openapi(
  "WebhookWithHealth",
);

export const WebhookWithSecretSchema = WebhookSchema.extend({
  secret: z.string().openapi({
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    description: "The signing secret. Shown in this response only; store it now.",
  }),
}).openapi("WebhookWithSecret");

export const WebhookPageSchema = pageSchema(WebhookSchema, "WebhookPage");

export const CreateWebhookBody = z
  .strictObject({
    url: Url,
    events: EventsList,
    description: Description.optional(),
    enabled: z.boolean().default(true),
  })
  .openapi("CreateWebhookRequest");

export const UpdateWebhookBody = z
  .strictObject({
    url: Url.optional(),
    events: EventsList.optional(),
    description: Description.optional(),
    enabled: z.boolean().optional().openapi({
      description:
        "`true` re-enables a disabled webhook and resets its failure count; its URL must pass the URL rules again (`422` on `url` otherwise).",
    }),
  })
  .refine((body) => Object.keys(body).length > 0, {
    message: "must change at least one of url, events, description, enabled",
  })
  .openapi("UpdateWebhookRequest");

export const RotateSecretBody = z
  .strictObject({
    previous_secret_ttl_seconds: z
      .number()
      .int()
      .min(0)
      .max(86_400 * 7)
      .default(86_400)
      .openapi({
        description:
          "How long the old secret keeps signing beside the new one; 0 retires it at once. Default 24 hours.",
      }),
  })
  .openapi("RotateSecretRequest");

export const WebhookIdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: "whk_01JD3Q8W2X4Y5Z6A7B8C9D0E1H" }),
});

export const DeliveryParams = WebhookIdParam.extend({
  delivery: z
    .string()
    .min(1)
    .openapi({ param: { name: "delivery", in: "path" }, example: "dlv_01JD3Q8W2X4Y5Z6A7B8C9D0E1N" }),
});

export const DeliveryAttemptSchema = z
  .object({
    number: z.number().int().openapi({ description: "1 for the first try, up to 4 (three retries)." }),
    started_at: z.string(),
    duration_ms: z.number().int(),
    response_status: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Null when no answer came (time-out, network error)." }),
    error: z.string().nullable().openapi({ example: "HTTP 500", description: "The failure in words." }),
    error_code: ErrorCode,
    response_body: z.string().nullable().openapi({ description: "The first KiB of the receiver's answer." }),
  })
  .openapi("DeliveryAttempt");

export const DeliverySchema = z
  .object({
    id: z.string().openapi({
      example: "dlv_01JD3Q8W2X4Y5Z6A7B8C9D0E1N",
      description: "Sent as `X-Webhook-Delivery` and `webhook-id`; the same on every retry.",
    }),
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: z.string().openapi({ example: "lesson.completed" }),
    status: z.enum(DELIVERY_STATUSES).openapi({
      description:
        "`pending` (not tried yet), `retrying` (a retry is scheduled), `succeeded`, `failed` (retries used up, 410, or the webhook was disabled).",
    }),
    attempt_count: z.number().int(),
    next_attempt_at: z
      .string()
      .nullable()
      .openapi({ description: "When the next try is due, while pending or retrying." }),
    last_response_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_error_code: ErrorCode,
    redelivery_of: z
      .string()
      .nullable()
      .openapi({ description: "The delivery this one repeats, for manual redeliveries." }),
    created_at: z.string(),
    completed_at: z.string().nullable(),
    attempts: z.array(DeliveryAttemptSchema),
  })
  .openapi("WebhookDelivery");

export const DeliveryPageSchema = pageSchema(DeliverySchema, "WebhookDeliveryPage");

export const ListDeliveriesQuery = z.object({
  ...pageQueryShape,
  status: z.enum(DELIVERY_STATUSES).optional().openapi({ description: "Only deliveries in this status." }),
  event: z
    .enum(Object.keys(EVENT_TYPES) as [string, ...string[]])
    .optional()
    .openapi({ description: "Only deliveries of this event type." }),
});

export const RecoverBody = z
  .strictObject({
    since: dateTime().openapi({
      description: `Redeliver every delivery that ended \`failed\` since this time (at most 30 days ago). ${DATE_TIME_BOUNDS_NOTE}`,
    }),
  })
  .openapi("RecoverRequest");

export const RecoverResponse = z
  .object({
    redelivered: z.number().int().openapi({ description: "New deliveries queued." }),
    deliveries: z.array(z.string()).openapi({ description: "Their ids." }),
    has_more: z.boolean().openapi({
      description:
        "True when more failed deliveries remain than one call queues (1,000); call again with the same `since`.",
    }),
  })
  .openapi("RecoverResult");

export const EventTypeSchema = z
  .object({
    type: z.string(),
    description: z.string(),
    subscribable: z.boolean(),
    example: z.object({
      id: z.string(),
      type: z.string(),
      created_at: z.string(),
      data: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi("EventType");

export const EventTypePageSchema = pageSchema(EventTypeSchema, "EventTypePage");
