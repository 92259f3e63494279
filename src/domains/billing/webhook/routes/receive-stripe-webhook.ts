import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { MAX_BODY_BYTES } from "../../../../platform/http/middleware";
import { jsonResponse, publicRoute } from "../../../../platform/openapi";
import { errorResponses } from "../../../../platform/openapi-problems";
import { BILLING } from "../../prefixes";
import { CLAIM_MS, HANDLED_EVENT_TYPES, receiveStripeEvent, SIGNATURE_TOLERANCE_SECONDS } from "../receive";

/** A Stripe event as Stripe posts it; only `id` and `type` are read before the signature is checked. */
const StripeEventBody = z
  .looseObject({
    id: z.string().openapi({ example: "evt_1QxYzA2eZvKYlo2CkLmNoPqR" }),
    object: z.literal("event"),
    type: z.string().openapi({ example: "customer.subscription.updated" }),
    created: z.number().int(),
    data: z.looseObject({ object: z.looseObject({}) }),
  })
  .openapi("StripeEvent", {
    description: "A Stripe event (https://docs.stripe.com/api/events/object), exactly as Stripe sends it.",
  });

const WebhookReceipt = z
  .object({
    received: z.literal(true),
    event_id: z.string().openapi({ example: "evt_1QxYzA2eZvKYlo2CkLmNoPqR" }),
    type: z.string().openapi({ example: "customer.subscription.updated" }),
    outcome: z.enum(["applied", "unchanged", "duplicate", "ignored"]).openapi({
      description:
        "`applied`: the subscription read from Stripe changed what Lingua knew; `unchanged`: it did not (or an equal or newer read was stored already); `duplicate`: this event was handled before, nothing was done; `ignored`: a type Lingua does not act on, or about a customer or subscription that is not one of Lingua's institutions'.",
    }),
  })
  .openapi("StripeWebhookReceipt");

const retryAfter = {
  "Retry-After": {
    description: "Seconds after which a retry can succeed.",
    schema: { type: "integer" as const, minimum: 1 },
  },
};

export const receiveStripeWebhookRoute = publicRoute({
  method: "post",
  path: `${BILLING}/webhook`,
  tags: ["Billing"],
  operationId: "receiveStripeWebhook",
  summary: "Stripe's webhook (called by Stripe only)",
  description: `The endpoint to register in Stripe (docs/billing.md, production setup); no token, the \`Stripe-Signature\` header instead, checked over the raw body with the endpoint's signing secret (\`STRIPE_WEBHOOK_SECRET\`) and a tolerance of ${SIGNATURE_TOLERANCE_SECONDS} seconds: a missing, wrong or older signature is \`400 webhook_signature_invalid\` and changes nothing.

Each event is handled once: a repeated event id answers \`200\` with \`outcome: "duplicate"\`; a delivery of an event that another delivery is handling right now is \`409 webhook_event_in_progress\` (held for ${CLAIM_MS / 1000} seconds at most), which Stripe retries. The event's own copy of an object is never trusted: the subscription it concerns is read again from Stripe and that state applied — to the billing account, the institution's plan and seats, and the rate limit of every token on its next request. Handled types: ${HANDLED_EVENT_TYPES.map((t) => `\`${t}\``).join(", ")}; any other type answers \`200\` with \`outcome: "ignored"\`. Bodies up to ${MAX_BODY_BYTES / 1024 / 1024} MiB.`,
  request: {
    headers: z.object({
      "stripe-signature": z
        .string()
        .openapi({ description: 'Stripe\'s `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`.' }),
    }),
    body: {
      required: true,
      content: { "application/json": { schema: StripeEventBody } },
    },
  },
  responses: {
    200: jsonResponse(WebhookReceipt, "Received: applied, unchanged, a duplicate, or ignored."),
    400: {
      ...errorResponses[400],
      description:
        "`webhook_signature_invalid`: no `Stripe-Signature`, a wrong one, or one older than 300 s.",
    },
    409: {
      ...errorResponses[409],
      description: "`webhook_event_in_progress`: another delivery of the same event is being handled.",
      headers: retryAfter,
    },
    503: {
      ...errorResponses[500],
      description:
        "`service_unavailable`: Stripe could not be reached to read the subscription (Stripe retries), or `billing_not_configured`; `institution_moving`: the customer's institution is being switched to another database (for a few seconds; Stripe delivers the event again).",
      headers: retryAfter,
    },
  },
});

export function registerReceiveStripeWebhook(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(receiveStripeWebhookRoute);
  // Not `app.openapi`: the signature covers the body's exact bytes, so it is read as text and
  // verified before anything parses it as JSON.
  app.post(`${BILLING}/webhook`, async (c) => {
    const raw = await c.req.text();
    const result = await receiveStripeEvent(c.get("ctx"), raw, c.req.header("Stripe-Signature"));
    c.header("Cache-Control", "no-store");
    return c.json(
      { received: true as const, event_id: result.eventId, type: result.type, outcome: result.outcome },
      200,
    );
  });
}
