import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { billingAccounts, institutions } from "../../src/db/schema";
import type { getSubscriptionRoute } from "../../src/domains/billing/routes/get-subscription";
import type { getTrialStatusRoute } from "../../src/domains/billing/routes/get-trial-status";
import { database } from "../../src/platform/db";
import { callJson, type ResponseBody } from "../helpers/api";
import { payCheckout, stripeApi } from "../helpers/stripe";
import { createPlatformAdmin, mintToken, type Tenant } from "../helpers/tenants";
import { freeTenant, recordSubscription, startCheckout } from "./support";

type Subscription = ResponseBody<typeof getSubscriptionRoute, 200>;
type Trial = ResponseBody<typeof getTrialStatusRoute, 200>;
const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

const read = <T>(tenant: Tenant, path: string) => callJson<T>(path, { token: tenant.admin.token });

/** A card-less trial started through checkout and recorded as the webhook would, the plan Pro. */
async function onTrial(tenant: Tenant) {
  const { body } = await startCheckout(tenant);
  await payCheckout(body.url, { card: false });
  const completed = await stripeApi(`/v1/checkout/sessions/${body.id}`);
  const subscription = await stripeApi(`/v1/subscriptions/${completed.subscription}`);
  await recordSubscription(tenant.institution.id, subscription, {
    discount: {
      code: "WELCOME20",
      percent_off: 20,
      amount_off: null,
      currency: null,
      duration: "repeating",
      duration_in_months: 3,
      ends_at: "2027-03-01T00:00:00Z",
    },
    latestInvoiceStatus: "paid",
  });
  await database(env.DB)
    .update(institutions)
    .set({ plan: "pro", seats: 3 })
    .where(eq(institutions.id, tenant.institution.id));
  return subscription;
}

function setAccount(tenant: Tenant, values: Partial<typeof billingAccounts.$inferInsert>) {
  return database(env.DB)
    .update(billingAccounts)
    .set(values)
    .where(eq(billingAccounts.institutionId, tenant.institution.id));
}

describe("GET /api/billing/subscription and GET /api/trial/status", () => {
  it("answer status none and no trial for an institution that never subscribed", async () => {
    const tenant = await freeTenant();
    const subscription = await read<Subscription>(tenant, "/api/billing/subscription");
    expect(subscription.res.status).toBe(200);
    expect(subscription.body).toEqual({
      status: "none",
      plan: "free",
      interval: null,
      seats: null,
      current_period_start: null,
      current_period_end: null,
      cancel_at_period_end: false,
      canceled_at: null,
      trial_start: null,
      trial_end: null,
      discount: null,
      latest_invoice_status: null,
      payment_method_on_file: false,
      pending_promo_code: null,
      synced_at: null,
    });
    const trial = await read<Trial>(tenant, "/api/trial/status");
    expect(trial.body).toEqual({
      plan: "free",
      on_trial: false,
      trial_started_at: null,
      trial_ends_at: null,
      days_remaining: null,
      payment_method_on_file: false,
      at_trial_end: null,
    });
  });

  it("show a trial as the webhook recorded it: 14 days left, back to Free at its end without a card", async () => {
    const tenant = await freeTenant();
    const stripe = await onTrial(tenant);
    const { body } = await read<Subscription>(tenant, "/api/billing/subscription");
    expect(body).toMatchObject({
      status: "trialing",
      plan: "pro",
      interval: "month",
      seats: 3,
      cancel_at_period_end: false,
      trial_start: iso(stripe.trial_start * 1000),
      trial_end: iso(stripe.trial_end * 1000),
      discount: { code: "WELCOME20", percent_off: 20, duration_in_months: 3 },
      latest_invoice_status: "paid",
    });
    const trial = await read<Trial>(tenant, "/api/trial/status");
    expect(trial.body).toMatchObject({
      plan: "pro",
      on_trial: true,
      trial_started_at: iso(stripe.trial_start * 1000),
      trial_ends_at: iso(stripe.trial_end * 1000),
      days_remaining: 14,
      payment_method_on_file: false,
      at_trial_end: "downgrade_to_free",
    });

    await setAccount(tenant, { paymentMethodOnFile: true });
    expect((await read<Trial>(tenant, "/api/trial/status")).body.at_trial_end).toBe("subscription_starts");
    await setAccount(tenant, { cancelAtPeriodEnd: true });
    expect((await read<Trial>(tenant, "/api/trial/status")).body.at_trial_end).toBe("downgrade_to_free");
  });

  it("round the days left up, and end the trial at its end", async () => {
    const tenant = await freeTenant();
    await onTrial(tenant);
    await setAccount(tenant, { trialEnd: iso(Date.now() + 2 * HOUR) });
    expect((await read<Trial>(tenant, "/api/trial/status")).body.days_remaining).toBe(1);
    await setAccount(tenant, { trialEnd: iso(Date.now() + 49 * HOUR) });
    expect((await read<Trial>(tenant, "/api/trial/status")).body.days_remaining).toBe(3);
    await setAccount(tenant, { trialEnd: iso(Date.now() - HOUR), subscriptionStatus: "active" });
    const ended = await read<Trial>(tenant, "/api/trial/status");
    expect(ended.body).toMatchObject({ on_trial: false, days_remaining: null, at_trial_end: null });
    expect(ended.body.trial_ends_at).not.toBeNull();
  });

  it("show each institution its own billing only", async () => {
    const [tenant, other] = await Promise.all([freeTenant(), freeTenant()]);
    await onTrial(tenant);
    expect((await read<Subscription>(other, "/api/billing/subscription")).body.status).toBe("none");
    expect((await read<Trial>(other, "/api/trial/status")).body.on_trial).toBe(false);
    expect((await read<Subscription>(tenant, "/api/billing/subscription")).body.status).toBe("trialing");
  });

  it("are for holders of billing:read in an institution", async () => {
    const tenant = await freeTenant();
    const writer = await mintToken(tenant.admin, ["billing:write"]);
    const reader = await mintToken(tenant.admin, ["billing:read"]);
    const staff = await createPlatformAdmin();
    for (const path of ["/api/billing/subscription", "/api/trial/status", "/api/subscription-plans"]) {
      for (const token of [tenant.learner.token, tenant.instructor.token, writer.token, staff.token]) {
        const { res } = await callJson(path, { token });
        expect(res.status, path).toBe(403);
      }
      expect((await callJson(path, { token: reader.token })).res.status).toBe(200);
      expect((await callJson(path)).res.status).toBe(401);
    }
  });
});
