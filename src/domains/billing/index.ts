import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerApplyPromo } from "./routes/apply-promo";
import { registerCreateCheckoutSession } from "./routes/create-checkout-session";
import { registerCreatePortalSession } from "./routes/create-portal-session";
import { registerGetSubscription } from "./routes/get-subscription";
import { registerGetTrialStatus } from "./routes/get-trial-status";
import { registerListPlans } from "./routes/list-plans";
import { registerReceiveStripeWebhook } from "./webhook/routes/receive-stripe-webhook";

/** Plans, checkout and portal sessions, promotion codes, the subscription, trials and Stripe's webhook. */
export function registerBilling(app: OpenAPIHono<AppEnv>) {
  registerListPlans(app);
  registerCreateCheckoutSession(app);
  registerCreatePortalSession(app);
  registerApplyPromo(app);
  registerGetSubscription(app);
  registerGetTrialStatus(app);
  registerReceiveStripeWebhook(app);
}
