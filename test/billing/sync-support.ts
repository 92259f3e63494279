import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { billingAccounts, institutions, outboxEvents } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { call } from "../helpers/api";
import { STRIPE_PRICE_PRO_MONTH, stripeApi } from "../helpers/stripe";
import { createTenant, type Tenant } from "../helpers/tenants";

/**
 * Fixtures of the Stripe → Lingua tests: an institution on Free with its Stripe customer (created in
 * the stand-in, its id on a billing account, as checkout creates them), a Checkout Session made in
 * the stand-in with the fields the checkout endpoint sends, and reads of what the worker stored.
 */

export const db = () => database(env.DB);

export interface BillingTenant extends Tenant {
  customer: string;
}

/** A Free institution with a Stripe customer (metadata.institution_id) and its billing account. */
export async function billingTenant(): Promise<BillingTenant> {
  const tenant = await createTenant({ plan: "free" });
  const customer = await stripeApi("/v1/customers", {
    params: {
      name: `Institution ${tenant.institution.id}`,
      "metadata[institution_id]": tenant.institution.id,
    },
  });
  await db()
    .insert(billingAccounts)
    .values({ institutionId: tenant.institution.id, stripeCustomerId: customer.id });
  return { ...tenant, customer: customer.id };
}

/** A Checkout Session in subscription mode, as POST /api/billing/checkout-session asks Stripe for one. */
export async function checkoutSession(
  t: BillingTenant,
  options: { price?: string; seats?: number; trialDays?: number | null } = {},
): Promise<{ id: string; url: string }> {
  const params: Record<string, string> = {
    mode: "subscription",
    customer: t.customer,
    client_reference_id: t.institution.id,
    "metadata[institution_id]": t.institution.id,
    "line_items[0][price]": options.price ?? STRIPE_PRICE_PRO_MONTH,
    "line_items[0][quantity]": String(options.seats ?? 5),
    "subscription_data[metadata][institution_id]": t.institution.id,
    payment_method_collection: "if_required",
    success_url: "https://app.example.test/billing/success?session={CHECKOUT_SESSION_ID}",
    cancel_url: "https://app.example.test/billing/cancel",
  };
  const trialDays = options.trialDays === undefined ? 14 : options.trialDays;
  if (trialDays) params["subscription_data[trial_period_days]"] = String(trialDays);
  return stripeApi("/v1/checkout/sessions", { params });
}

export async function accountOf(institutionId: string) {
  return db().select().from(billingAccounts).where(eq(billingAccounts.institutionId, institutionId)).get();
}

export async function institutionOf(institutionId: string) {
  return db().select().from(institutions).where(eq(institutions.id, institutionId)).get();
}

/** The outbox events of an institution of the given type, oldest first. */
export async function eventsOf(institutionId: string, type: string) {
  const rows = await db().select().from(outboxEvents).where(eq(outboxEvents.institutionId, institutionId));
  return rows.filter((r) => r.type === type).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
}

/** The per-token limit the next request of `token` carries. */
export async function rateLimitOf(token: string): Promise<number> {
  const res = await call("/api/auth/me", { token });
  await res.arrayBuffer();
  return Number(res.headers.get("X-RateLimit-Limit"));
}
