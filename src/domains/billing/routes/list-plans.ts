import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { PageQuery, paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { ProblemSchema } from "../../../platform/openapi-problems";
import { listPlans } from "../plans";
import { SUBSCRIPTION_PLANS } from "../prefixes";
import { SubscriptionPlanPageSchema } from "../schemas";

export const listPlansRoute = tokenRoute("billing:read", {
  method: "get",
  path: SUBSCRIPTION_PLANS,
  tags: ["Billing"],
  operationId: "listSubscriptionPlans",
  summary: "List subscription plans",
  description: `Every plan — Free, Pro, Enterprise, in that order — with its limits, features, trial and prices; \`current\` marks your
institution's plan. Prices come from Stripe (money as an integer amount in the currency's minor unit plus an ISO 4217
\`currency\`), kept a few minutes by the API; Enterprise is \`contact_sales\` without prices. On a deployment without billing
configured every plan is listed with no prices (never a 503).`,
  request: { query: PageQuery },
  responses: {
    200: jsonResponse(SubscriptionPlanPageSchema, "The plans."),
    502: {
      description: "`billing_provider_error`: Stripe did not answer the prices, and none were read before.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

export function registerListPlans(app: OpenAPIHono<AppEnv>) {
  app.openapi(listPlansRoute, async (c) => {
    const { page, per_page } = c.req.valid("query");
    const all = await listPlans(principalContext(c));
    return c.json(
      paginate(c, { page, per_page }, all.length, all.slice((page - 1) * per_page, page * per_page)),
      200,
    );
  });
}
