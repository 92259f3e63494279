import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses, ProblemSchema } from "../../../platform/openapi-problems";
import { createCheckoutSession } from "../checkout";
import { BILLING } from "../prefixes";
import { CheckoutSessionSchema, CreateCheckoutSessionBody, PromoInvalidProblemSchema } from "../schemas";

export const createCheckoutSessionRoute = tokenRoute("billing:write", {
  method: "post",
  path: `${BILLING}/checkout-session`,
  tags: ["Billing"],
  operationId: "createCheckoutSession",
  summary: "Start a subscription checkout",
  description: `Opens a Stripe Checkout Session in subscription mode for your institution's Stripe customer (created on the first
call and kept): the plan's price for \`seats\` seats, a free trial of \`trial_days\` (see the plans) if the institution never
subscribed — card-less: Stripe asks for a payment method only if the trial's end needs one — and the promotion code given,
or kept by \`POST /api/billing/apply-promo\`; without one the customer may enter a code on Stripe's page. Send the
customer's browser to \`url\`; Stripe sends it back to \`success_url\` or \`cancel_url\`, and tells Lingua through its webhook,
after which the plan changes (\`GET /api/billing/subscription\`).

\`success_url\` and \`cancel_url\` must be https URLs on an origin the deployment allows; \`success_url\` may contain
\`{CHECKOUT_SESSION_ID}\`. Stripe receives an idempotency key derived from your \`Idempotency-Key\`, or, without one, from
the request itself for a minute: a retry or a double click opens one session, not two.`,
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateCheckoutSessionBody) },
  responses: {
    201: jsonResponse(CheckoutSessionSchema, "The session: send the customer to `url`."),
    409: {
      ...errorResponses[409],
      description:
        "`subscription_exists`: the institution has a trialing, active, past due or unpaid subscription (change it in the portal); `idempotency_in_flight`.",
    },
    422: {
      description:
        "`validation_failed` (a redirect URL off the allowed origins or not https, fewer seats than members, an interval not sold), `contact_sales` (Enterprise), `promo_code_invalid` (with `reason`), `idempotency_key_reused`.",
      content: {
        "application/problem+json": { schema: z.union([PromoInvalidProblemSchema, ProblemSchema]) },
      },
    },
    502: {
      description: "`billing_provider_error`: Stripe failed or could not be reached; nothing was charged.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
    503: {
      description: "`billing_not_configured`: the deployment has no Stripe key, price or redirect origin.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

export function registerCreateCheckoutSession(app: OpenAPIHono<AppEnv>) {
  app.openapi(createCheckoutSessionRoute, async (c) => {
    const session = await createCheckoutSession(
      principalContext(c),
      c.req.valid("json"),
      c.req.valid("header")["Idempotency-Key"],
    );
    return c.json(session, 201);
  });
}
