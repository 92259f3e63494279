import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { ProblemSchema } from "../../../platform/openapi-problems";
import { BILLING } from "../prefixes";
import { applyPromo } from "../promo";
import { AppliedPromoSchema, ApplyPromoBody, PromoInvalidProblemSchema } from "../schemas";

export const applyPromoRoute = tokenRoute("billing:write", {
  method: "post",
  path: `${BILLING}/apply-promo`,
  tags: ["Billing"],
  operationId: "applyPromoCode",
  summary: "Apply a promotion code",
  description: `Looks the promotion code up in Stripe and checks it: it exists, is active, has not expired, has redemptions left,
and its restrictions — first-time customers only, a minimum amount (the plan's price times the seats), the products it
applies to — admit your institution. With a trialing, active, past due or unpaid subscription the code is applied to it
(\`applied_to: "subscription"\`; the subscription's \`discount\` shows it once Stripe confirms); without one it is kept for the
institution's next checkout (\`"next_checkout"\`; its minimum amount is checked then, against the order). Applying the same
code again answers the same, and redeems nothing twice.`,
  request: { body: jsonBody(ApplyPromoBody) },
  responses: {
    200: jsonResponse(AppliedPromoSchema, "Applied, or kept for the next checkout."),
    422: {
      description: "`promo_code_invalid`, with `reason`; `validation_failed`.",
      content: {
        "application/problem+json": { schema: z.union([PromoInvalidProblemSchema, ProblemSchema]) },
      },
    },
    502: {
      description: "`billing_provider_error`: Stripe failed or could not be reached.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
    503: {
      description: "`billing_not_configured`: the deployment has no Stripe key or Pro price.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

export function registerApplyPromo(app: OpenAPIHono<AppEnv>) {
  app.openapi(applyPromoRoute, async (c) => {
    return c.json(await applyPromo(principalContext(c), c.req.valid("json")), 200);
  });
}
