import { eq } from "drizzle-orm";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { stripeEvents } from "../../src/db/schema";
import { call } from "../helpers/api";
import {
  deliver,
  deliverAll,
  payCheckout,
  STRIPE_TEST_WEBHOOK_SECRET,
  STRIPE_WEBHOOK_PATH,
  stripeApi,
  stripeDeliveries,
  stripeLifecycle,
} from "../helpers/stripe";
import {
  accountOf,
  type BillingTenant,
  billingTenant,
  checkoutSession,
  db,
  eventsOf,
  institutionOf,
} from "./sync-support";

// POST /api/billing/webhook: the signature over the raw body, each event once, and state read from
// Stripe rather than taken from the event. Fixtures are signed with the SDK's
// generateTestHeaderStringAsync; the stand-in's own deliveries are signed by the stand-in.

const webhooks = new Stripe("sk_test_fixture", { httpClient: Stripe.createFetchHttpClient() }).webhooks;
const cryptoProvider = Stripe.createSubtleCryptoProvider();

let fixtureCounter = 0;
/** A Stripe-shaped event around `object`, with an id of its own. */
function fixtureEvent(type: string, object: Record<string, unknown>) {
  fixtureCounter += 1;
  return JSON.stringify({
    id: `evt_fixture_${Date.now().toString(36)}_${fixtureCounter}`,
    object: "event",
    api_version: "2026-10-28.endive",
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  });
}

async function signed(payload: string, options: { secret?: string; timestamp?: number } = {}) {
  return webhooks.generateTestHeaderStringAsync({
    payload,
    secret: options.secret ?? STRIPE_TEST_WEBHOOK_SECRET,
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    cryptoProvider,
  });
}

async function post(payload: string, signature?: string) {
  const res = await call(STRIPE_WEBHOOK_PATH, {
    method: "POST",
    rawBody: payload,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      ...(signature === undefined ? {} : { "Stripe-Signature": signature }),
    },
  });
  return { res, body: await res.json<any>() };
}

async function storedEvent(id: string) {
  return db().select().from(stripeEvents).where(eq(stripeEvents.id, id)).get();
}

/** A paid (not trialing) subscription, its events delivered. */
async function subscribed(t: BillingTenant) {
  const session = await checkoutSession(t, { trialDays: null, seats: 2 });
  await payCheckout(session.url);
  const { next_index } = await deliverAll(t.customer);
  return { subscription: (await accountOf(t.institution.id))!.subscriptionId!, next: next_index };
}

describe("the signature", () => {
  it("is required: without one, 400 webhook_signature_invalid, and nothing is stored", async () => {
    const payload = fixtureEvent("customer.subscription.updated", {
      id: "sub_unknown",
      object: "subscription",
    });
    const { res, body } = await post(payload);
    expect(res.status).toBe(400);
    expect(res.headers.get("Content-Type")).toContain("application/problem+json");
    expect(body.code).toBe("webhook_signature_invalid");
    expect(body.detail).toContain("missing");
    expect(await storedEvent(JSON.parse(payload).id)).toBeUndefined();
  });

  it("must be made with the endpoint's secret over the exact body", async () => {
    const payload = fixtureEvent("customer.subscription.updated", {
      id: "sub_unknown",
      object: "subscription",
    });
    const wrongSecret = await post(payload, await signed(payload, { secret: "whsec_someone_else" }));
    expect(wrongSecret.res.status).toBe(400);
    expect(wrongSecret.body.code).toBe("webhook_signature_invalid");
    // The body changed after signing (a space is enough).
    const tampered = await post(`${payload} `, await signed(payload));
    expect(tampered.res.status).toBe(400);
    expect(await storedEvent(JSON.parse(payload).id)).toBeUndefined();
  });

  it("older than 300 seconds is refused, against replays", async () => {
    const t = await billingTenant();
    const session = await checkoutSession(t);
    await payCheckout(session.url);
    const { data } = await stripeDeliveries(t.customer);
    const first = data[0]!;
    const res = await deliver(first, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    const body = await res.json<any>();
    expect(res.status).toBe(400);
    expect(body.code).toBe("webhook_signature_invalid");
    expect(body.detail).toContain("300 seconds");
    expect(await storedEvent(first.event_id)).toBeUndefined();
    expect((await accountOf(t.institution.id))?.subscriptionId).toBeNull();
    expect((await institutionOf(t.institution.id))?.plan).toBe("free");
  });
});

describe("each event once", () => {
  it("records an unknown type and ignores it (200)", async () => {
    const payload = fixtureEvent("customer.tax_id.created", { id: "txi_123", object: "tax_id" });
    const { res, body } = await post(payload, await signed(payload));
    expect(res.status).toBe(200);
    expect(body).toEqual({
      received: true,
      event_id: JSON.parse(payload).id,
      type: "customer.tax_id.created",
      outcome: "ignored",
    });
    const stored = await storedEvent(JSON.parse(payload).id);
    expect(stored).toMatchObject({ type: "customer.tax_id.created", institutionId: null });
    expect(stored?.processedAt).not.toBeNull();
  });

  it("applies a repeated event once: the second delivery is a duplicate and publishes nothing", async () => {
    const t = await billingTenant();
    const session = await checkoutSession(t);
    await payCheckout(session.url);
    const { data } = await stripeDeliveries(t.customer, { type: "customer.subscription.created" });
    const created = data[0]!;
    const first = await deliver(created);
    expect(first.status).toBe(200);
    expect((await first.json<any>()).outcome).toBe("applied");
    const again = await deliver(created);
    expect(again.status).toBe(200);
    expect((await again.json<any>()).outcome).toBe("duplicate");
    expect(await eventsOf(t.institution.id, "subscription.updated")).toHaveLength(1);
    expect(await storedEvent(created.event_id)).toMatchObject({ institutionId: t.institution.id });
  });

  it("lets two concurrent deliveries of one event apply it once", async () => {
    const t = await billingTenant();
    const session = await checkoutSession(t);
    await payCheckout(session.url);
    const { data } = await stripeDeliveries(t.customer, { type: "customer.subscription.created" });
    const responses = await Promise.all([deliver(data[0]!), deliver(data[0]!)]);
    const statuses = responses.map((r) => r.status).sort();
    const bodies = await Promise.all(responses.map((r) => r.json<any>()));
    // One applies it; the other finds it handled (200 duplicate) or in hand (409, Stripe retries).
    expect(statuses[0]).toBe(200);
    expect([200, 409]).toContain(statuses[1]);
    expect(bodies.filter((b) => b.outcome === "applied")).toHaveLength(1);
    expect(await eventsOf(t.institution.id, "subscription.updated")).toHaveLength(1);
  });

  it("answers 409 while another delivery holds the event, and handles it again once that delivery's claim is stale", async () => {
    const t = await billingTenant();
    const session = await checkoutSession(t);
    await payCheckout(session.url);
    const { data } = await stripeDeliveries(t.customer, { type: "customer.subscription.created" });
    const created = data[0]!;
    // A delivery took it in hand a moment ago and has not finished (or died).
    await db().insert(stripeEvents).values({
      id: created.event_id,
      type: created.type,
      receivedAt: new Date().toISOString(),
      claimedAt: new Date().toISOString(),
    });
    const held = await deliver(created);
    expect(held.status).toBe(409);
    expect(held.headers.get("Retry-After")).toBe("60");
    expect((await held.json<any>()).code).toBe("webhook_event_in_progress");
    expect((await institutionOf(t.institution.id))?.plan).toBe("free");

    // The holder died: past its claim, Stripe's retry handles the event.
    await db()
      .update(stripeEvents)
      .set({ claimedAt: new Date(Date.now() - 61_000).toISOString() })
      .where(eq(stripeEvents.id, created.event_id));
    const retried = await deliver(created);
    expect(retried.status).toBe(200);
    expect((await retried.json<any>()).outcome).toBe("applied");
    expect((await institutionOf(t.institution.id))?.plan).toBe("pro");
  });
});

describe("state from Stripe, not from the event", () => {
  it("ends with Stripe's state when a deletion arrives before the update that preceded it", async () => {
    const t = await billingTenant();
    const { subscription, next } = await subscribed(t);
    const current = await stripeApi(`/v1/subscriptions/${subscription}`);
    await stripeApi(`/v1/subscriptions/${subscription}`, {
      params: { "items[0][id]": current.items.data[0].id, "items[0][quantity]": "7" },
    });
    await stripeLifecycle.cancel(subscription);
    const { data } = await stripeDeliveries(t.customer, { since: next });
    const updated = data.find((d) => d.type === "customer.subscription.updated")!;
    const deleted = data.find((d) => d.type === "customer.subscription.deleted")!;

    const first = await deliver(deleted);
    expect((await first.json<any>()).outcome).toBe("applied");
    const late = await deliver(updated);
    expect(late.status).toBe(200);
    expect((await late.json<any>()).outcome).toBe("unchanged");

    expect(await accountOf(t.institution.id)).toMatchObject({ subscriptionStatus: "canceled", quantity: 7 });
    expect(await institutionOf(t.institution.id)).toMatchObject({ plan: "free", seats: null });
    const updates = await eventsOf(t.institution.id, "subscription.updated");
    expect(updates.at(-1)!.payload).toMatchObject({ status: "canceled", plan: "free" });
  });

  it("ignores what a signed event claims when Stripe says otherwise", async () => {
    const t = await billingTenant();
    const { subscription } = await subscribed(t);
    const payload = fixtureEvent("customer.subscription.deleted", {
      id: subscription,
      object: "subscription",
      customer: t.customer,
      status: "canceled",
    });
    const { res, body } = await post(payload, await signed(payload));
    expect(res.status).toBe(200);
    expect(body.outcome).toBe("unchanged");
    expect(await accountOf(t.institution.id)).toMatchObject({ subscriptionStatus: "active" });
    expect((await institutionOf(t.institution.id))?.plan).toBe("pro");
  });

  it("ignores a checkout whose customer is not the institution's", async () => {
    const t = await billingTenant();
    const other = await billingTenant();
    // A session of the other institution's customer, claiming to be this institution's.
    const session = await stripeApi("/v1/checkout/sessions", {
      params: {
        mode: "subscription",
        customer: other.customer,
        client_reference_id: t.institution.id,
        "line_items[0][price]": "price_pro_month",
        "line_items[0][quantity]": "1",
        success_url: "https://app.example.test/ok",
        cancel_url: "https://app.example.test/cancel",
      },
    });
    await payCheckout(session.url);
    const { data } = await stripeDeliveries(other.customer, { type: "checkout.session.completed" });
    const res = await deliver(data[0]!);
    expect(res.status).toBe(200);
    expect((await res.json<any>()).outcome).toBe("ignored");
    expect((await accountOf(t.institution.id))?.subscriptionId).toBeNull();
    expect((await institutionOf(t.institution.id))?.plan).toBe("free");
  });
});

describe("limits and settings", () => {
  it("records and ignores an event whose object Stripe does not have", async () => {
    const payload = fixtureEvent("customer.subscription.updated", {
      id: "sub_does_not_exist",
      object: "subscription",
    });
    const { res, body } = await post(payload, await signed(payload));
    expect(res.status).toBe(200);
    expect(body.outcome).toBe("ignored");
    expect((await storedEvent(JSON.parse(payload).id))?.processedAt).not.toBeNull();
  });

  it("refuses a body over 1 MiB with 413, before reading it", async () => {
    const payload = fixtureEvent("customer.tax_id.created", {
      id: "txi_big",
      padding: "x".repeat(1024 * 1024),
    });
    const { res, body } = await post(payload, await signed(payload));
    expect(res.status).toBe(413);
    expect(body.code).toBe("payload_too_large");
    expect(await storedEvent(JSON.parse(payload).id)).toBeUndefined();
  });

  it("answers 503 billing_not_configured on a deployment without the webhook's signing secret", async () => {
    const payload = fixtureEvent("customer.tax_id.created", { id: "txi_1", object: "tax_id" });
    const res = await call(STRIPE_WEBHOOK_PATH, {
      method: "POST",
      rawBody: payload,
      headers: { "Content-Type": "application/json", "Stripe-Signature": await signed(payload) },
      env: { STRIPE_WEBHOOK_SECRET: "" },
    });
    expect(res.status).toBe(503);
    expect((await res.json<any>()).code).toBe("billing_not_configured");
    expect(await storedEvent(JSON.parse(payload).id)).toBeUndefined();
  });
});
