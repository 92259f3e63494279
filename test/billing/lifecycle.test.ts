import { describe, expect, it } from "vitest";
import { applySubscription } from "../../src/domains/billing/sync";
import { callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import {
  deliverAll,
  payCheckout,
  portalAction,
  STRIPE_PRICE_PRO_MONTH,
  STRIPE_PRICE_PRO_YEAR,
  stripeApi,
  stripeLifecycle,
} from "../helpers/stripe";
import { createTenant } from "../helpers/tenants";
import {
  accountOf,
  type BillingTenant,
  billingTenant,
  checkoutSession,
  eventsOf,
  institutionOf,
  rateLimitOf,
} from "./sync-support";

// The subscription's life cycle as an institution lives it: checkout on the stand-in's hosted page,
// Stripe's events delivered to POST /api/billing/webhook, and what the institution then is (plan,
// seats, the rate limit of a token it already holds), through the API wherever it shows.

const DAY_MS = 86_400_000;

/** Checkout paid on the hosted page and its events delivered: the institution's subscription id. */
async function subscribe(t: BillingTenant, options: Parameters<typeof checkoutSession>[1] = {}) {
  const session = await checkoutSession(t, options);
  const paid = await payCheckout(session.url);
  expect(paid.status).toBe(303);
  const delivered = await deliverAll(t.customer);
  expect(delivered.responses.every((r) => r.status === 200)).toBe(true);
  const account = await accountOf(t.institution.id);
  return { subscription: account!.subscriptionId!, next: delivered.next_index };
}

describe("checkout → pay → Stripe's events", () => {
  it("makes the institution Pro on a 14-day trial, and the next request of an existing token has the Pro limit", async () => {
    const t = await createTenant({ plan: "free" });
    expect(await rateLimitOf(t.admin.token)).toBe(100);

    // The checkout endpoint creates the Stripe customer and the session; the admin pays on Stripe's page.
    const checkout = await callJson("/api/billing/checkout-session", {
      token: t.admin.token,
      body: {
        plan: "pro",
        interval: "month",
        seats: 5,
        success_url: "https://app.example.test/billing/done?session={CHECKOUT_SESSION_ID}",
        cancel_url: "https://app.example.test/billing",
      },
    });
    expect(checkout.res.status).toBe(201);
    expect((await payCheckout(checkout.body.url)).status).toBe(303);
    const customer = (await accountOf(t.institution.id))!.stripeCustomerId;
    const { responses } = await deliverAll(customer);
    expect(responses.map((r) => r.type)).toEqual(
      expect.arrayContaining(["checkout.session.completed", "customer.subscription.created"]),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);

    const account = await accountOf(t.institution.id);
    expect(account).toMatchObject({
      subscriptionStatus: "trialing",
      priceId: STRIPE_PRICE_PRO_MONTH,
      interval: "month",
      quantity: 5,
      everSubscribed: true,
      cancelAtPeriodEnd: false,
    });
    expect(Date.parse(account!.trialEnd!) - Date.parse(account!.trialStart!)).toBe(14 * DAY_MS);
    expect(await institutionOf(t.institution.id)).toMatchObject({ plan: "pro", seats: 5 });
    expect(await rateLimitOf(t.admin.token)).toBe(1000);

    // One change, one event, however many of Stripe's events re-read the same state.
    const updated = await eventsOf(t.institution.id, "subscription.updated");
    expect(updated).toHaveLength(1);
    expect(updated[0]!.payload).toMatchObject({
      subscription_id: account!.subscriptionId,
      status: "trialing",
      plan: "pro",
      interval: "month",
      seats: 5,
      cancel_at_period_end: false,
      trial_end: account!.trialEnd,
      changes: {
        status: { from: null, to: "trialing" },
        plan: { from: "free", to: "pro" },
        seats: { from: null, to: 5 },
      },
    });

    // A second checkout is refused now that a subscription is live.
    const again = await callJson("/api/billing/checkout-session", {
      token: t.admin.token,
      body: {
        plan: "pro",
        success_url: "https://app.example.test/billing/done",
        cancel_url: "https://app.example.test/billing",
      },
    });
    expect(again.res.status).toBe(409);
  });
});

describe("a card-less trial", () => {
  it("that ends without a card cancels the subscription: the institution is Free again at once", async () => {
    const t = await createTenant({ plan: "free" });
    const checkout = await callJson("/api/billing/checkout-session", {
      token: t.admin.token,
      body: {
        plan: "pro",
        seats: 3,
        success_url: "https://app.example.test/billing/done",
        cancel_url: "https://app.example.test/billing",
      },
    });
    expect(checkout.res.status).toBe(201);
    expect((await payCheckout(checkout.body.url, { card: false })).status).toBe(303);
    const customer = (await accountOf(t.institution.id))!.stripeCustomerId;
    const started = await deliverAll(customer);
    expect(await rateLimitOf(t.admin.token)).toBe(1000);
    const trial = await callJson("/api/trial/status", { token: t.admin.token });
    expect(trial.body).toMatchObject({
      on_trial: true,
      payment_method_on_file: false,
      at_trial_end: "downgrade_to_free",
    });

    const { subscriptionId } = (await accountOf(t.institution.id))!;
    await stripeLifecycle.endTrial(subscriptionId!);
    const ended = await deliverAll(customer, { since: started.next_index });
    expect(ended.responses.map((r) => r.type)).toContain("customer.subscription.deleted");
    expect(ended.responses.map((r) => r.type)).not.toContain("invoice.payment_failed");
    expect(await accountOf(t.institution.id)).toMatchObject({ subscriptionStatus: "canceled" });
    expect(await institutionOf(t.institution.id)).toMatchObject({ plan: "free", seats: null });
    expect(await rateLimitOf(t.admin.token)).toBe(100);
  });
});

describe("cancellation", () => {
  it("at period end keeps Pro until Stripe deletes the subscription, then Free and the Free limit at once", async () => {
    const t = await billingTenant();
    // Paid, not trialing: the stand-in ends a trial set to cancel with an invoice, where Stripe cancels.
    const { subscription, next } = await subscribe(t, { trialDays: null });
    // The admin cancels in Stripe's billing portal, reached through the API.
    const portal = await callJson("/api/billing/portal-session", {
      token: t.admin.token,
      body: { return_url: "https://app.example.test/billing" },
    });
    expect(portal.res.status).toBe(201);
    const cancelled = await portalAction(portal.body.url, { action: "cancel_at_period_end", subscription });
    expect(cancelled.status).toBe(303);
    const afterCancel = await deliverAll(t.customer, { since: next });
    expect(afterCancel.responses.every((r) => r.status === 200)).toBe(true);
    expect(await accountOf(t.institution.id)).toMatchObject({
      cancelAtPeriodEnd: true,
      subscriptionStatus: "active",
    });
    expect((await institutionOf(t.institution.id))?.plan).toBe("pro");
    expect(await rateLimitOf(t.admin.token)).toBe(1000);
    const updates = await eventsOf(t.institution.id, "subscription.updated");
    expect(updates.at(-1)!.payload).toMatchObject({
      cancel_at_period_end: true,
      changes: { cancel_at_period_end: { from: false, to: true } },
    });

    // The period ends: Stripe deletes the subscription.
    await stripeLifecycle.renew(subscription);
    await deliverAll(t.customer, { since: afterCancel.next_index });
    expect(await accountOf(t.institution.id)).toMatchObject({ subscriptionStatus: "canceled" });
    expect(await institutionOf(t.institution.id)).toMatchObject({ plan: "free", seats: null });
    expect(await rateLimitOf(t.admin.token)).toBe(100);
    expect((await eventsOf(t.institution.id, "subscription.updated")).at(-1)!.payload).toMatchObject({
      status: "canceled",
      plan: "free",
      changes: { status: { from: "active", to: "canceled" }, plan: { from: "pro", to: "free" } },
    });
  });

  it("now (a downgrade) lowers the limit on the very next request", async () => {
    const t = await billingTenant();
    const { subscription, next } = await subscribe(t, { trialDays: null });
    expect((await accountOf(t.institution.id))?.subscriptionStatus).toBe("active");
    expect(await rateLimitOf(t.admin.token)).toBe(1000);
    await stripeLifecycle.cancel(subscription);
    await deliverAll(t.customer, { since: next });
    expect(await rateLimitOf(t.admin.token)).toBe(100);
    expect((await institutionOf(t.institution.id))?.plan).toBe("free");
  });
});

describe("seats", () => {
  it("follow the subscription's quantity: member creation is refused above it", async () => {
    const t = await billingTenant();
    const { subscription, next } = await subscribe(t, { seats: 3 });
    // The admin, the instructor and the learner fill the 3 seats.
    const create = (email: string) =>
      callJson(`/api/institutions/${t.institution.id}/members`, {
        token: t.admin.token,
        body: { email, name: "New Member" },
      });
    const refused = await create(`a-${t.institution.id}@example.test`);
    expect(refused.res.status).toBe(409);
    expect(refused.body.code).toBe("seat_limit_reached");

    const current = await stripeApi(`/v1/subscriptions/${subscription}`);
    await stripeApi(`/v1/subscriptions/${subscription}`, {
      params: {
        "items[0][id]": current.items.data[0].id,
        "items[0][quantity]": "4",
        "items[0][price]": STRIPE_PRICE_PRO_YEAR,
      },
    });
    await deliverAll(t.customer, { since: next });
    expect(await institutionOf(t.institution.id)).toMatchObject({ plan: "pro", seats: 4 });
    expect(await accountOf(t.institution.id)).toMatchObject({ quantity: 4, interval: "year" });
    expect((await create(`b-${t.institution.id}@example.test`)).res.status).toBe(201);
  });
});

describe("trial and payment notices", () => {
  it("publishes trial.will_end and invoice.payment_failed; past_due keeps Pro, unpaid falls to Free", async () => {
    const t = await billingTenant();
    const { subscription, next } = await subscribe(t);
    const willEnd = await stripeLifecycle.trialWillEnd(subscription);
    expect(willEnd.deliveries.map((d) => d.type)).toContain("customer.subscription.trial_will_end");
    const afterNotice = await deliverAll(t.customer, { since: next });
    const notices = await eventsOf(t.institution.id, "trial.will_end");
    expect(notices).toHaveLength(1);
    const account = await accountOf(t.institution.id);
    expect(notices[0]!.payload).toEqual({
      subscription_id: subscription,
      plan: "pro",
      trial_end: account!.trialEnd,
      payment_method_on_file: false,
      at_trial_end: "downgrade_to_free",
    });

    // The trial ends without a card: the first invoice fails.
    await stripeLifecycle.endTrial(subscription);
    const afterTrial = await deliverAll(t.customer, { since: afterNotice.next_index });
    expect(afterTrial.responses.map((r) => r.type)).toContain("invoice.payment_failed");
    expect(await accountOf(t.institution.id)).toMatchObject({ subscriptionStatus: "past_due" });
    expect((await institutionOf(t.institution.id))?.plan).toBe("pro");
    const failed = await eventsOf(t.institution.id, "invoice.payment_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.payload).toMatchObject({
      subscription_id: subscription,
      subscription_status: "past_due",
      currency: "eur",
    });
    expect(failed[0]!.payload).toHaveProperty("invoice_id");
    expect(failed[0]!.payload).toHaveProperty("amount_due");
    expect(failed[0]!.payload).toHaveProperty("next_payment_attempt");

    await stripeLifecycle.markUnpaid(subscription);
    await deliverAll(t.customer, { since: afterTrial.next_index });
    expect(await accountOf(t.institution.id)).toMatchObject({ subscriptionStatus: "unpaid" });
    expect((await institutionOf(t.institution.id))?.plan).toBe("free");
    expect(await rateLimitOf(t.admin.token)).toBe(100);
  });
});

describe("the synced_at guard", () => {
  it("drops a read older than the one stored, and applies a newer one", async () => {
    const t = await billingTenant();
    await subscribe(t, { trialDays: null, seats: 2 });
    const stored = (await accountOf(t.institution.id))!;
    const state = {
      subscriptionId: stored.subscriptionId!,
      customerId: t.customer,
      status: "canceled" as const,
      priceId: stored.priceId,
      interval: stored.interval,
      quantity: 2,
      currentPeriodStart: stored.currentPeriodStart,
      currentPeriodEnd: stored.currentPeriodEnd,
      cancelAtPeriodEnd: false,
      canceledAt: stored.currentPeriodStart,
      trialStart: null,
      trialEnd: null,
      discount: null,
      latestInvoiceStatus: "paid",
      paymentMethodOnFile: true,
    };
    const older = new Date(Date.parse(stored.syncedAt!) - 1000).toISOString();
    const outcome = await applySubscription(testContext(), {
      institutionId: t.institution.id,
      state,
      readAt: older,
    });
    expect(outcome.outcome).toBe("stale");
    expect(await accountOf(t.institution.id)).toMatchObject({
      subscriptionStatus: "active",
      syncedAt: stored.syncedAt,
    });
    expect((await institutionOf(t.institution.id))?.plan).toBe("pro");

    const newer = new Date(Date.parse(stored.syncedAt!) + 1000).toISOString();
    const applied = await applySubscription(testContext(), {
      institutionId: t.institution.id,
      state,
      readAt: newer,
    });
    expect(applied.outcome).toBe("applied");
    expect(await accountOf(t.institution.id)).toMatchObject({
      subscriptionStatus: "canceled",
      syncedAt: newer,
    });
    expect((await institutionOf(t.institution.id))?.plan).toBe("free");
  });
});
