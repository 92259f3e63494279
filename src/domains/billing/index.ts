import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerReceiveStripeWebhook } from "./webhook/routes/receive-stripe-webhook";

/** Plans, checkout and portal sessions, promotion codes, the subscription, trials and Stripe's webhook. */
export function registerBilling(app: OpenAPIHono<AppEnv>) {
  registerReceiveStripeWebhook(app);
}
