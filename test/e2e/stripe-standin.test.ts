/**
 * The local Stripe stand-in (scripts/stripe-standin/) driven by the REAL `stripe` SDK, configured as
 * the worker configures it for STRIPE_API_BASE (`host`/`port`/`protocol`, the fetch HTTP client): if
 * the SDK can parse, type and verify what the stand-in answers, the worker can. No dev server: the
 * stand-in runs in this process, its webhooks go to a loopback receiver, and one test drives its
 * hosted checkout page in Debian's Chromium.
 */
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StripeStandIn, startStripeStandIn } from "../../scripts/stripe-standin/index.mjs";
import { CHROMIUM, keepRequestsTo, launchChromium } from "./helpers/browser";

const SECRET_KEY = "sk_test_standin_e2e_0000000000000000000000";
const WEBHOOK_SECRET = "whsec_standin_e2e_000000000000000000000000";
const APP = "https://app.example.test";

interface Received {
  body: string;
  signature: string;
}

let standIn: StripeStandIn;
let stripe: Stripe;
let receiver: { url: string; received: Received[]; close: () => Promise<void> };

function sdk(key = SECRET_KEY): Stripe {
  const base = new URL(standIn.url);
  return new Stripe(key, {
    host: base.hostname,
    port: Number(base.port),
    protocol: "http",
    httpClient: Stripe.createFetchHttpClient(),
    maxNetworkRetries: 0,
  });
}

async function startReceiver() {
  const received: Received[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({
      body: Buffer.concat(chunks).toString("utf8"),
      signature: String(req.headers["stripe-signature"]),
    });
    res.writeHead(200).end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/billing/webhook`,
    received,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

async function control(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${standIn.url}/_standin${path}`, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

/** What the hosted page's form does. */
async function submitCheckout(url: string, form: Record<string, string>) {
  const res = await fetch(url, { method: "POST", body: new URLSearchParams(form), redirect: "manual" });
  return { status: res.status, location: res.headers.get("location"), html: await res.text() };
}

/** The events of `customer` as the SDK verifies them, in order. */
async function verifiedEvents(customer: string, since = 0) {
  const { data } = await control("GET", `/deliveries?customer=${customer}&since=${since}`);
  const events: Stripe.Event[] = [];
  for (const delivery of data) {
    events.push(
      await stripe.webhooks.constructEventAsync(
        delivery.payload,
        delivery.signature,
        WEBHOOK_SECRET,
        300,
        Stripe.createSubtleCryptoProvider(),
      ),
    );
  }
  return events;
}

async function promoId(code: string) {
  const list = await stripe.promotionCodes.list({ code });
  return list.data[0]!.id;
}

async function newCustomer(institution: string = crypto.randomUUID()) {
  return stripe.customers.create({
    name: "Acme",
    email: `billing+${institution}@acme.test`,
    metadata: { institution_id: institution },
  });
}

function checkoutParams(customer: string, extra: Partial<Stripe.Checkout.SessionCreateParams> = {}) {
  return {
    mode: "subscription",
    customer,
    client_reference_id: "inst_1",
    line_items: [{ price: "price_pro_month", quantity: 3 }],
    success_url: `${APP}/billing/done?session={CHECKOUT_SESSION_ID}`,
    cancel_url: `${APP}/billing`,
    ...extra,
  } satisfies Stripe.Checkout.SessionCreateParams;
}

beforeAll(async () => {
  receiver = await startReceiver();
  standIn = await startStripeStandIn({
    secretKey: SECRET_KEY,
    webhookSecret: WEBHOOK_SECRET,
    webhookUrl: receiver.url,
  });
  stripe = sdk();
});

afterAll(async () => {
  await standIn?.close();
  await receiver?.close();
});

describe("the REST API through the stripe SDK", () => {
  it("creates, reads, updates and lists customers with metadata", async () => {
    const customer = await newCustomer("inst_a");
    expect(customer).toMatchObject({ object: "customer", metadata: { institution_id: "inst_a" } });
    expect(customer.id).toMatch(/^cus_[A-Za-z0-9]{14}$/);
    const updated = await stripe.customers.update(customer.id, {
      metadata: { institution_id: "", plan: "pro" },
    });
    expect(updated.metadata).toEqual({ plan: "pro" });
    const read = await stripe.customers.retrieve(customer.id);
    expect(read).toMatchObject({ id: customer.id, email: customer.email, metadata: { plan: "pro" } });
    const listed = await stripe.customers.list({ email: customer.email! });
    expect(listed.data.map((c) => c.id)).toEqual([customer.id]);
  });

  it("answers Stripe's errors: a missing object, a bad key, an unknown parameter, a missing one", async () => {
    const missing = await stripe.customers.retrieve("cus_missing").catch((e) => e);
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({ statusCode: 404, code: "resource_missing", param: "id" });
    expect(missing.message).toBe("No such customer: 'cus_missing'");

    const badKey = await sdk("sk_test_wrong")
      .customers.list()
      .catch((e) => e);
    expect(badKey).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(badKey.statusCode).toBe(401);
    const noKey = await fetch(`${standIn.url}/v1/customers`);
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as any).error).toMatchObject({ type: "invalid_request_error" });

    const unknown = await stripe.customers
      .create({ colour: "red" } as Stripe.CustomerCreateParams)
      .catch((e) => e);
    expect(unknown).toMatchObject({ statusCode: 400, code: "parameter_unknown", param: "colour" });

    const customer = await newCustomer();
    const noPrice = await stripe.checkout.sessions
      .create(checkoutParams(customer.id, { line_items: [{ price: "price_nope", quantity: 1 }] }))
      .catch((e) => e);
    expect(noPrice).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(noPrice).toMatchObject({
      statusCode: 400,
      code: "resource_missing",
      param: "line_items[0][price]",
    });
    const noSuccess = await stripe.checkout.sessions
      .create({ mode: "subscription", customer: customer.id, line_items: [{ price: "price_pro_month" }] })
      .catch((e) => e);
    expect(noSuccess).toMatchObject({ statusCode: 400, code: "parameter_missing", param: "success_url" });
    const json = await fetch(`${standIn.url}/v1/customers`, {
      method: "POST",
      headers: { Authorization: `Bearer ${SECRET_KEY}`, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(400);
  });

  it("lists the seeded prices by lookup key, with their product expanded", async () => {
    const prices = await stripe.prices.list({
      lookup_keys: ["pro_month", "pro_year"],
      active: true,
      expand: ["data.product"],
    });
    const byKey = Object.fromEntries(prices.data.map((p) => [p.lookup_key, p]));
    expect(byKey.pro_month).toMatchObject({
      id: "price_pro_month",
      unit_amount: 900,
      currency: "eur",
      recurring: { interval: "month", interval_count: 1, usage_type: "licensed" },
      product: { id: "prod_lingua_pro", name: "Lingua Pro", object: "product" },
    });
    expect(byKey.pro_year).toMatchObject({
      id: "price_pro_year",
      unit_amount: 9000,
      recurring: { interval: "year" },
    });
    expect(prices).toMatchObject({ object: "list", has_more: false });
  });

  it("pages lists with limit and starting_after", async () => {
    const email = `paging-${crypto.randomUUID()}@acme.test`;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await stripe.customers.create({ email })).id);
    const first = await stripe.customers.list({ email, limit: 2 });
    expect(first.data.map((c) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const next = await stripe.customers.list({ email, limit: 2, starting_after: ids[1] });
    expect(next.data.map((c) => c.id)).toEqual([ids[0]]);
    expect(next.has_more).toBe(false);
    const all = [];
    for await (const c of stripe.customers.list({ email, limit: 1 })) all.push(c.id);
    expect(all).toEqual([ids[2], ids[1], ids[0]]);
  });

  it("replays an idempotent request and refuses its key with other parameters", async () => {
    const customer = await newCustomer();
    const key = crypto.randomUUID();
    const params = checkoutParams(customer.id);
    const first = await stripe.checkout.sessions.create(params, { idempotencyKey: key });
    const again = await stripe.checkout.sessions.create(params, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    // The SDK's fetch client hands over the Headers object its types call a record.
    const headers = again.lastResponse.headers as unknown as Headers;
    expect(headers.get("idempotent-replayed")).toBe("true");
    const other = await stripe.checkout.sessions
      .create({ ...params, line_items: [{ price: "price_pro_year", quantity: 3 }] }, { idempotencyKey: key })
      .catch((e) => e);
    expect(other).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(other.statusCode).toBe(400);
    expect((await stripe.checkout.sessions.list({ customer: customer.id })).data).toHaveLength(1);
  });
});

describe("checkout, the hosted page and the events", () => {
  it("a card-less trial with a promotion code: the page, pay, trialing, signed events in Stripe's order", async () => {
    const customer = await newCustomer("inst_trial");
    const session = await stripe.checkout.sessions.create(
      checkoutParams(customer.id, {
        client_reference_id: "inst_trial",
        payment_method_collection: "if_required",
        subscription_data: { trial_period_days: 14, metadata: { institution_id: "inst_trial" } },
        discounts: [{ promotion_code: await promoId("WELCOME20") }],
        metadata: { institution_id: "inst_trial" },
      }),
    );
    expect(session).toMatchObject({
      object: "checkout.session",
      mode: "subscription",
      status: "open",
      customer: customer.id,
      client_reference_id: "inst_trial",
      payment_method_collection: "if_required",
      amount_total: 0,
      discounts: [{ coupon: "welcome20" }],
      subscription: null,
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.expires_at - session.created).toBe(24 * 3600);
    expect(session.url).toBe(`${standIn.url}/checkout/${session.id}`);

    const page = await fetch(session.url!);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("Lingua Pro");
    expect(html).toContain("€9.00 per seat / month");
    expect(html).toMatch(/Seats: <span id="quantity">3<\/span>/);
    expect(html).toContain("14-day free trial");
    expect(html).toContain("WELCOME20");
    expect(html).toContain("20 % off for 3 months");

    const paid = await submitCheckout(session.url!, { action: "pay" });
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`${APP}/billing/done?session=${session.id}`);

    const done = await stripe.checkout.sessions.retrieve(session.id, {
      expand: ["subscription.latest_invoice", "subscription.discounts"],
    });
    expect(done).toMatchObject({ status: "complete", payment_status: "no_payment_required" });
    const sub = done.subscription as Stripe.Subscription;
    expect(sub).toMatchObject({
      object: "subscription",
      status: "trialing",
      customer: customer.id,
      metadata: { institution_id: "inst_trial" },
      default_payment_method: null,
      cancel_at_period_end: false,
    });
    expect(sub.trial_end! - sub.trial_start!).toBe(14 * 86_400);
    expect(sub.items.data[0]).toMatchObject({ quantity: 3, price: { id: "price_pro_month" } });
    expect(sub.items.data[0]!.current_period_end).toBe(sub.trial_end);
    expect(sub.latest_invoice).toMatchObject({ object: "invoice", status: "paid", amount_paid: 0 });
    const discount = sub.discounts[0] as Stripe.Discount;
    expect(discount).toMatchObject({ object: "discount", source: { coupon: "welcome20", type: "coupon" } });
    expect(
      (await stripe.promotionCodes.retrieve(discount.promotion_code as string)).times_redeemed,
    ).toBeGreaterThan(0);

    const events = await verifiedEvents(customer.id);
    expect(events.map((e) => e.type)).toEqual([
      "customer.subscription.created",
      "invoice.paid",
      "checkout.session.completed",
    ]);
    for (const event of events) {
      expect(event).toMatchObject({ object: "event", livemode: false, api_version: Stripe.API_VERSION });
      expect(event.id).toMatch(/^evt_/);
    }
    const completed = events[2]!.data.object as Stripe.Checkout.Session;
    expect(completed).toMatchObject({
      id: session.id,
      subscription: sub.id,
      client_reference_id: "inst_trial",
    });
    expect((await stripe.events.retrieve(events[0]!.id)).type).toBe("customer.subscription.created");

    // Delivered to the webhook URL too, in order, each verifiable with the SDK.
    await standIn.settle();
    const mine = receiver.received.filter((r) => r.body.includes(customer.id));
    expect(mine.map((r) => JSON.parse(r.body).type)).toEqual(events.map((e) => e.type));
    for (const r of mine) {
      await expect(
        stripe.webhooks.constructEventAsync(
          r.body,
          r.signature,
          WEBHOOK_SECRET,
          300,
          Stripe.createSubtleCryptoProvider(),
        ),
      ).resolves.toMatchObject({ object: "event" });
    }
    await expect(
      stripe.webhooks.constructEventAsync(
        mine[0]!.body,
        mine[0]!.signature,
        "whsec_other",
        300,
        Stripe.createSubtleCryptoProvider(),
      ),
    ).rejects.toThrow(Stripe.errors.StripeSignatureVerificationError);

    // Three days before its end; then the trial ends without a card: past_due and a failed invoice;
    // a card later: active and paid.
    const warned = await control("POST", `/subscriptions/${sub.id}/trial_will_end`);
    expect(warned.deliveries.map((d: any) => d.type)).toEqual(["customer.subscription.trial_will_end"]);
    const ended = await control("POST", `/subscriptions/${sub.id}/end_trial`);
    expect(ended.subscription.status).toBe("past_due");
    expect(ended.deliveries.map((d: any) => d.type)).toEqual([
      "customer.subscription.updated",
      "invoice.payment_failed",
    ]);
    const updated = JSON.parse(ended.deliveries[0].payload);
    expect(updated.data.previous_attributes).toMatchObject({ status: "trialing" });
    const failed = JSON.parse(ended.deliveries[1].payload).data.object;
    expect(failed).toMatchObject({ status: "open", amount_due: 2160, attempt_count: 1 });
    expect(failed.parent.subscription_details.subscription).toBe(sub.id);
    const recovered = await control("POST", `/subscriptions/${sub.id}/recover`);
    expect(recovered.subscription.status).toBe("active");
    expect(recovered.deliveries.map((d: any) => d.type)).toEqual([
      "customer.subscription.updated",
      "invoice.paid",
    ]);
  });

  it("without a trial: active with a paid invoice; a code typed on the page; cancel goes back", async () => {
    const customer = await newCustomer();
    const session = await stripe.checkout.sessions.create(
      checkoutParams(customer.id, { allow_promotion_codes: true }),
    );
    const back = await submitCheckout(session.url!, { action: "cancel" });
    expect(back).toMatchObject({ status: 303, location: `${APP}/billing` });
    const wrong = await submitCheckout(session.url!, { action: "pay", promotion_code: "EXPIRED10" });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain("expired");
    const paid = await submitCheckout(session.url!, { action: "pay", promotion_code: "welcome20" });
    expect(paid.status).toBe(303);
    const sub = (await stripe.subscriptions.list({ customer: customer.id, expand: ["data.latest_invoice"] }))
      .data[0]!;
    expect(sub.status).toBe("active");
    expect(sub.default_payment_method).toMatch(/^pm_/);
    expect(sub.latest_invoice).toMatchObject({
      status: "paid",
      amount_paid: 2160,
      subtotal: 2700,
      currency: "eur",
    });
    const again = await submitCheckout(session.url!, { action: "pay" });
    expect(again.status).toBe(409);
    expect((await verifiedEvents(customer.id)).map((e) => e.type)).toEqual([
      "customer.subscription.created",
      "invoice.paid",
      "checkout.session.completed",
    ]);
  });
});

describe("deliveries and expiry", () => {
  it("retries a failed delivery, in order, re-signed each time", async () => {
    const answers = [500, 200];
    const bodies: { status: number; body: string; signature: string }[] = [];
    const flaky = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const status = answers.shift() ?? 200;
      bodies.push({
        status,
        body: Buffer.concat(chunks).toString("utf8"),
        signature: String(req.headers["stripe-signature"]),
      });
      res.writeHead(status).end();
    });
    await new Promise<void>((r) => flaky.listen(0, "127.0.0.1", () => r()));
    const own = await startStripeStandIn({
      secretKey: SECRET_KEY,
      webhookSecret: WEBHOOK_SECRET,
      webhookUrl: `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/hook`,
      seed: false,
    });
    try {
      const auth = { Authorization: `Bearer ${SECRET_KEY}` };
      const product = (await (
        await fetch(`${own.url}/v1/products`, {
          method: "POST",
          headers: auth,
          body: new URLSearchParams({ name: "P" }),
        })
      ).json()) as any;
      const price = (await (
        await fetch(`${own.url}/v1/prices`, {
          method: "POST",
          headers: auth,
          body: new URLSearchParams({
            product: product.id,
            unit_amount: "100",
            currency: "eur",
            "recurring[interval]": "month",
          }),
        })
      ).json()) as any;
      const customer = (await (
        await fetch(`${own.url}/v1/customers`, { method: "POST", headers: auth, body: "" })
      ).json()) as any;
      const session = (await (
        await fetch(`${own.url}/v1/checkout/sessions`, {
          method: "POST",
          headers: auth,
          body: new URLSearchParams({
            mode: "subscription",
            customer: customer.id,
            "line_items[0][price]": price.id,
            success_url: `${APP}/ok`,
          }),
        })
      ).json()) as any;
      expect((await submitCheckout(session.url, { action: "pay" })).status).toBe(303);
      await own.settle();
      expect(bodies.map((b) => [b.status, JSON.parse(b.body).type])).toEqual([
        [500, "customer.subscription.created"],
        [200, "customer.subscription.created"],
        [200, "invoice.paid"],
        [200, "checkout.session.completed"],
      ]);
      expect(own.deliveries({ customer: customer.id }).map((d) => [d.status, d.attempts.length])).toEqual([
        ["delivered", 2],
        ["delivered", 1],
        ["delivered", 1],
      ]);
    } finally {
      await own.close();
      flaky.closeAllConnections();
      flaky.close();
    }
  });

  it("expires a session on request: the page no longer pays it", async () => {
    const customer = await newCustomer();
    const session = await stripe.checkout.sessions.create(checkoutParams(customer.id));
    const expired = await stripe.checkout.sessions.expire(session.id);
    expect(expired).toMatchObject({ status: "expired", url: null });
    expect((await submitCheckout(session.url!, { action: "pay" })).status).toBe(409);
    expect((await verifiedEvents(customer.id)).map((e) => e.type)).toEqual(["checkout.session.expired"]);
    const again = await stripe.checkout.sessions.expire(session.id).catch((e) => e);
    expect(again.statusCode).toBe(400);
  });
});

describe("subscriptions and the portal", () => {
  async function subscribed() {
    const customer = await newCustomer();
    const session = await stripe.checkout.sessions.create(checkoutParams(customer.id));
    await submitCheckout(session.url!, { action: "pay" });
    const sub = (await stripe.subscriptions.list({ customer: customer.id })).data[0]!;
    const { next_index } = await control("GET", `/deliveries?customer=${customer.id}`);
    return { customer, sub, since: next_index as number };
  }

  it("the portal changes seats and interval, cancels at period end, and cancels now", async () => {
    const { customer, sub, since: start } = await subscribed();
    const portal = await stripe.billingPortal.sessions.create({
      customer: customer.id,
      return_url: `${APP}/billing`,
    });
    expect(portal).toMatchObject({ object: "billing_portal.session", return_url: `${APP}/billing` });
    expect(portal.id).toMatch(/^bps_/);
    const page = await fetch(portal.url);
    expect(await page.text()).toContain("Cancel at period end");
    const form = (action: string) => submitCheckout(portal.url, { action, subscription: sub.id });
    const changed = await submitCheckout(portal.url, {
      action: "update",
      subscription: sub.id,
      price: "price_pro_year",
      quantity: "4",
    });
    expect(changed).toMatchObject({ status: 303, location: `${APP}/billing` });
    const yearly = await stripe.subscriptions.retrieve(sub.id, { expand: ["latest_invoice"] });
    expect(yearly.items.data[0]).toMatchObject({ quantity: 4, price: { id: "price_pro_year" } });
    expect(yearly.latest_invoice).toMatchObject({ status: "paid", amount_paid: 36_000 });
    const changes = await verifiedEvents(customer.id, start);
    expect(changes.map((e) => e.type)).toEqual(["customer.subscription.updated", "invoice.paid"]);
    const { next_index: since } = await control("GET", `/deliveries?customer=${customer.id}`);
    expect(await form("cancel_at_period_end")).toMatchObject({ status: 303, location: `${APP}/billing` });
    const ending = await stripe.subscriptions.retrieve(sub.id);
    expect(ending).toMatchObject({
      status: "active",
      cancel_at_period_end: true,
      cancel_at: yearly.items.data[0]!.current_period_end,
    });
    const [updated] = await verifiedEvents(customer.id, since);
    expect(updated).toMatchObject({
      type: "customer.subscription.updated",
      data: { previous_attributes: { cancel_at_period_end: false } },
    });
    await form("cancel_now");
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe("canceled");
    expect((await verifiedEvents(customer.id, since)).map((e) => e.type)).toEqual([
      "customer.subscription.updated",
      "customer.subscription.deleted",
    ]);
    expect((await stripe.subscriptions.list({ customer: customer.id })).data).toEqual([]);
    expect(
      (await stripe.subscriptions.list({ customer: customer.id, status: "canceled" })).data,
    ).toHaveLength(1);
  });

  it("updates seats and interval, applies a promotion code, and cancels with DELETE", async () => {
    const { customer, sub, since } = await subscribed();
    const seats = await stripe.subscriptions.update(sub.id, {
      items: [{ id: sub.items.data[0]!.id, quantity: 5 }],
      proration_behavior: "none",
    });
    expect(seats.items.data[0]!.quantity).toBe(5);
    const yearly = await stripe.subscriptions.update(sub.id, {
      items: [{ id: sub.items.data[0]!.id, price: "price_pro_year" }],
      discounts: [
        {
          promotion_code: (await control("POST", "/promotion_codes", { percent_off: 50 })).promotion_code.id,
        },
      ],
      expand: ["latest_invoice", "discounts"],
    });
    expect(yearly.items.data[0]!.price.id).toBe("price_pro_year");
    expect(yearly.latest_invoice).toMatchObject({ status: "paid", subtotal: 45_000, amount_paid: 22_500 });
    expect(yearly.discounts).toHaveLength(1);
    const wrongItem = await stripe.subscriptions
      .update(sub.id, { items: [{ id: "si_nope", quantity: 2 }] })
      .catch((e) => e);
    expect(wrongItem).toMatchObject({ statusCode: 400, code: "resource_missing", param: "items[0][id]" });
    const canceled = await stripe.subscriptions.cancel(sub.id);
    expect(canceled).toMatchObject({ status: "canceled" });
    expect(canceled.ended_at).not.toBeNull();
    expect((await verifiedEvents(customer.id, since)).map((e) => e.type)).toEqual([
      "customer.subscription.updated",
      "customer.subscription.updated",
      "invoice.paid",
      "customer.subscription.deleted",
    ]);
    const renamed = await stripe.subscriptions
      .update(sub.id, { items: [{ id: sub.items.data[0]!.id, quantity: 2 }] })
      .catch((e) => e);
    expect(renamed.statusCode).toBe(400);
  });

  it("life-cycle moves: a failed payment, unpaid, renewal that ends a cancelled subscription", async () => {
    const { customer, sub } = await subscribed();
    await control("DELETE", `/customers/${customer.id}/payment_method`);
    const declined = await stripe.subscriptions
      .update(sub.id, {
        items: [{ id: sub.items.data[0]!.id, price: "price_pro_year" }],
        payment_behavior: "error_if_incomplete",
      })
      .catch((e) => e);
    expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(declined).toMatchObject({ statusCode: 402, code: "card_declined" });
    expect((await stripe.subscriptions.retrieve(sub.id)).items.data[0]!.price.id).toBe("price_pro_month");
    const failed = await control("POST", `/subscriptions/${sub.id}/fail_payment`);
    expect(failed.subscription.status).toBe("past_due");
    expect(failed.deliveries.map((d: any) => d.type)).toEqual([
      "customer.subscription.updated",
      "invoice.payment_failed",
    ]);
    const unpaid = await control("POST", `/subscriptions/${sub.id}/mark_unpaid`);
    expect(unpaid.subscription.status).toBe("unpaid");
    await control("POST", `/subscriptions/${sub.id}/recover`);
    await stripe.subscriptions.update(sub.id, { cancel_at_period_end: true });
    const ended = await control("POST", `/subscriptions/${sub.id}/renew`);
    expect(ended.subscription.status).toBe("canceled");
    expect(ended.deliveries.map((d: any) => d.type)).toEqual(["customer.subscription.deleted"]);
    const invoices = await stripe.invoices.list({ customer: customer.id });
    expect(invoices.data.map((i) => i.status)).toEqual(["paid", "paid"]);
  });
});

describe("promotion codes", () => {
  it("carry Stripe's fields, and the coupon's applies_to when expanded", async () => {
    const other = await stripe.products.create({ name: "Other" });
    const { promotion_code } = await control("POST", "/promotion_codes", {
      amount_off: 500,
      currency: "eur",
      duration: "forever",
      max_redemptions: 10,
      first_time_transaction: true,
      minimum_amount: 1000,
      applies_to_products: [other.id],
    });
    const read = await stripe.promotionCodes.retrieve(promotion_code.id, {
      expand: ["promotion.coupon.applies_to"],
    });
    expect(read).toMatchObject({
      object: "promotion_code",
      active: true,
      max_redemptions: 10,
      times_redeemed: 0,
      restrictions: { first_time_transaction: true, minimum_amount: 1000, minimum_amount_currency: "eur" },
      promotion: {
        type: "coupon",
        coupon: {
          object: "coupon",
          amount_off: 500,
          currency: "eur",
          duration: "forever",
          applies_to: { products: [other.id] },
        },
      },
    });
    const plain = await stripe.promotionCodes.retrieve(promotion_code.id, { expand: ["promotion.coupon"] });
    expect((plain.promotion.coupon as Stripe.Coupon).applies_to).toBeUndefined();
    const expired = (await stripe.promotionCodes.list({ code: "expired10" })).data[0]!;
    expect(expired.expires_at! < Date.now() / 1000).toBe(true);
    const welcome = (
      await stripe.promotionCodes.list({ code: "WELCOME20", active: true, expand: ["data.promotion.coupon"] })
    ).data[0]!;
    expect(welcome.promotion.coupon).toMatchObject({
      percent_off: 20,
      duration: "repeating",
      duration_in_months: 3,
    });
  });

  it("are refused at checkout when expired, exhausted, for returning customers, under the minimum or not applicable", async () => {
    const refused = async (customer: string, code: { id: string }, quantity = 3) =>
      stripe.checkout.sessions
        .create(
          checkoutParams(customer, {
            line_items: [{ price: "price_pro_month", quantity }],
            discounts: [{ promotion_code: code.id }],
          }),
        )
        .catch((e) => e);
    const customer = await newCustomer();

    const expired = await refused(customer.id, { id: await promoId("EXPIRED10") });
    expect(expired).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(expired).toMatchObject({
      statusCode: 400,
      code: "coupon_expired",
      param: "discounts[0][promotion_code]",
    });

    const once = (await control("POST", "/promotion_codes", { max_redemptions: 1 })).promotion_code;
    const first = await stripe.checkout.sessions.create(
      checkoutParams(customer.id, { discounts: [{ promotion_code: once.id }] }),
    );
    await submitCheckout(first.url!, { action: "pay" });
    expect((await stripe.promotionCodes.retrieve(once.id)).times_redeemed).toBe(1);
    const exhausted = await refused((await newCustomer()).id, once);
    expect(exhausted.message).toMatch(/maximum number of times/);

    const firstTime = (await control("POST", "/promotion_codes", { first_time_transaction: true }))
      .promotion_code;
    expect((await refused(customer.id, firstTime)).message).toMatch(/first-time customers/);
    expect(await refused((await newCustomer()).id, firstTime)).toMatchObject({ object: "checkout.session" });

    const minimum = (
      await control("POST", "/promotion_codes", { minimum_amount: 5000, minimum_amount_currency: "eur" })
    ).promotion_code;
    expect((await refused((await newCustomer()).id, minimum, 3)).message).toMatch(/minimum/);
    expect(await refused((await newCustomer()).id, minimum, 6)).toMatchObject({ object: "checkout.session" });

    const elsewhere = (
      await control("POST", "/promotion_codes", {
        applies_to_products: [(await stripe.products.create({ name: "X" })).id],
      })
    ).promotion_code;
    expect((await refused((await newCustomer()).id, elsewhere)).message).toMatch(/does not apply/);

    const both = await stripe.checkout.sessions
      .create(
        checkoutParams(customer.id, {
          allow_promotion_codes: true,
          discounts: [{ promotion_code: await promoId("WELCOME20") }],
        }),
      )
      .catch((e) => e);
    expect(both).toMatchObject({ statusCode: 400, type: "StripeInvalidRequestError" });
  });
});

describe.skipIf(!existsSync(CHROMIUM))("the hosted checkout page in a browser", () => {
  it("renders the session and its Pay button completes it and redirects", async () => {
    const app = createServer((req, res) =>
      res.writeHead(200, { "Content-Type": "text/html" }).end(`<h1>Welcome back ${req.url}</h1>`),
    );
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", () => r()));
    const appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    const customer = await newCustomer();
    const session = await stripe.checkout.sessions.create(
      checkoutParams(customer.id, {
        success_url: `${appOrigin}/done?session={CHECKOUT_SESSION_ID}`,
        cancel_url: `${appOrigin}/cancelled`,
        subscription_data: { trial_period_days: 14 },
      }),
    );
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      const allowed = new Set([new URL(standIn.url).origin, appOrigin]);
      await keepRequestsTo(context, (url) => allowed.has(url.origin));
      const page = await context.newPage();
      await page.goto(session.url!);
      expect(await page.textContent("#plan")).toBe("Lingua Pro");
      expect(await page.textContent("#quantity")).toBe("3");
      expect(await page.textContent("#trial")).toContain("14-day free trial");
      await Promise.all([page.waitForURL(`${appOrigin}/done?**`), page.click("button[value=pay]")]);
      expect(page.url()).toBe(`${appOrigin}/done?session=${session.id}`);
      expect(await page.textContent("h1")).toContain("Welcome back");
    } finally {
      await browser.close();
      app.closeAllConnections();
      app.close();
    }
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe("complete");
  });
});
