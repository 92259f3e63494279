import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { billingAccounts } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { stripeApi } from "../helpers/stripe";
import { createTenant, type Tenant } from "../helpers/tenants";

/** The one origin the tests' worker allows for billing redirects (vitest.config.ts). */
export const APP = "https://app.example.test";

export const checkoutBody = (extra: Record<string, unknown> = {}) => ({
  plan: "pro",
  interval: "month",
  success_url: `${APP}/billing/done?session={CHECKOUT_SESSION_ID}`,
  cancel_url: `${APP}/billing`,
  ...extra,
});

/** A fresh institution on Free (the billing tests' starting point), its admin, instructor and learner signed in. */
export function freeTenant(): Promise<Tenant> {
  return createTenant({ plan: "free" });
}

export async function startCheckout(
  tenant: Tenant,
  extra: Record<string, unknown> = {},
  headers?: Record<string, string>,
) {
  return callJson("/api/billing/checkout-session", {
    token: tenant.admin.token,
    body: checkoutBody(extra),
    headers,
  });
}

export function billingAccount(institutionId: string) {
  return database(env.DB)
    .select()
    .from(billingAccounts)
    .where(eq(billingAccounts.institutionId, institutionId))
    .get();
}

/** The Checkout Session as the stand-in holds it, with its line items. */
export function stripeSession(id: string) {
  return stripeApi(`/v1/checkout/sessions/${id}`, { params: { "expand[]": "line_items" }, method: "GET" });
}

/**
 * Records a subscription on the institution's billing account as the webhook would (the sync part,
 * built beside this one, is not in this branch): `subscription` read from the stand-in.
 */
export async function recordSubscription(
  institutionId: string,
  subscription: any,
  extra: Partial<typeof billingAccounts.$inferInsert> = {},
) {
  const item = subscription.items.data[0];
  const iso = (s: number | null | undefined) =>
    s ? new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z") : null;
  await database(env.DB)
    .update(billingAccounts)
    .set({
      everSubscribed: true,
      subscriptionId: subscription.id,
      subscriptionStatus: subscription.status,
      priceId: item.price.id,
      interval: item.price.recurring.interval,
      quantity: item.quantity,
      currentPeriodStart: iso(item.current_period_start),
      currentPeriodEnd: iso(item.current_period_end),
      trialStart: iso(subscription.trial_start),
      trialEnd: iso(subscription.trial_end),
      ...extra,
    })
    .where(eq(billingAccounts.institutionId, institutionId))
    .run();
}
