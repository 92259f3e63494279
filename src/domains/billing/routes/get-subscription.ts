import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { BILLING } from "../prefixes";
import { SubscriptionSchema } from "../schemas";
import { readSubscription } from "../subscription-read";

export const getSubscriptionRoute = tokenRoute("billing:read", {
  method: "get",
  path: `${BILLING}/subscription`,
  tags: ["Billing"],
  operationId: "getSubscription",
  summary: "Read the subscription",
  description: `Your institution's subscription as Stripe last told Lingua: status, plan, interval, seats, the current period,
cancellation, trial, discount and the latest invoice's status. \`plan\` is the plan in force (it sets the rate limits). An
institution that never subscribed answers \`status: "none"\` (not a 404), with its plan.`,
  responses: { 200: jsonResponse(SubscriptionSchema, "The subscription.") },
});

export function registerGetSubscription(app: OpenAPIHono<AppEnv>) {
  app.openapi(getSubscriptionRoute, async (c) => c.json(await readSubscription(principalContext(c)), 200));
}
