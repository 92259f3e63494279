// The run's Stripe stand-in (scripts/stripe-standin/, started by vitest.config.ts), seen from a test in
// workerd: its control API (the deliveries of a customer's events, life-cycle moves, test promotion
// codes), what its hosted pages' forms do, and the delivery of its signed events to the worker's
// webhook endpoint through `call`, as Stripe would POST them.
//
// The stand-in is shared by every test file of the run: each test works on its own customers (its own
// institution's), and reads deliveries by customer.
import { inject } from "vitest";
import type { StandInDelivery } from "../../scripts/stripe-standin/index.mjs";
import { LOCAL_SECRET_KEY, LOCAL_WEBHOOK_SECRET } from "../../scripts/stripe-standin/local.mjs";
import { type CallOptions, call } from "./api";

export type { StandInDelivery };

/** The worker's webhook endpoint for Stripe. */
export const STRIPE_WEBHOOK_PATH = "/api/billing/webhook";
/** The key and signing secret the worker is configured with in the tests (vitest.config.ts). */
export const STRIPE_TEST_SECRET_KEY = LOCAL_SECRET_KEY;
export const STRIPE_TEST_WEBHOOK_SECRET = LOCAL_WEBHOOK_SECRET;
/** The seeded demo catalogue. */
export const STRIPE_PRICE_PRO_MONTH = "price_pro_month";
export const STRIPE_PRICE_PRO_YEAR = "price_pro_year";
export const STRIPE_PRODUCT_PRO = "prod_lingua_pro";

export function stripeStandInUrl(): string {
  return inject("stripeUrl");
}

async function control<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stripeStandInUrl()}/_standin${path}`, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`stripe stand-in: ${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** An API request to the stand-in as the SDK makes it (form-encoded, the test key): for test set-up and reads. */
export async function stripeApi<T = any>(
  path: string,
  options: { method?: string; params?: Record<string, string> } = {},
): Promise<T> {
  const method = options.method ?? (options.params ? "POST" : "GET");
  const query = method === "GET" && options.params ? `?${new URLSearchParams(options.params)}` : "";
  const res = await fetch(`${stripeStandInUrl()}${path}${query}`, {
    method,
    headers: {
      Authorization: `Bearer ${LOCAL_SECRET_KEY}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: method === "GET" ? undefined : new URLSearchParams(options.params ?? {}),
  });
  const body = await res.json<any>();
  if (!res.ok)
    throw new Error(`stripe stand-in: ${method} ${path} answered ${res.status}: ${JSON.stringify(body)}`);
  return body as T;
}

/**
 * The signed deliveries of `customer`'s events, oldest first; `since` (a `next_index` from an earlier
 * read) keeps only later ones, `type` one event type.
 */
export async function stripeDeliveries(
  customer: string,
  options: { since?: number; type?: string } = {},
): Promise<{ data: StandInDelivery[]; next_index: number }> {
  const query = new URLSearchParams({ customer, since: String(options.since ?? 0) });
  if (options.type) query.set("type", options.type);
  return control("GET", `/deliveries?${query}`);
}

/** A `Stripe-Signature` for `payload` at `timestamp` (Unix seconds), signed with the test secret. */
export async function signStripePayload(payload: string, timestamp: number): Promise<string> {
  return (await control<{ signature: string }>("POST", "/sign", { payload, timestamp })).signature;
}

/**
 * POSTs `delivery` to the worker's webhook endpoint as Stripe does: the raw payload, its
 * `Stripe-Signature` (or `signature`, or one made at `timestamp`).
 */
export async function deliver(
  delivery: Pick<StandInDelivery, "payload" | "signature">,
  options: { signature?: string; timestamp?: number } & Omit<CallOptions, "body" | "rawBody"> = {},
): Promise<Response> {
  const { signature, timestamp, headers, ...rest } = options;
  const header =
    signature ??
    (timestamp === undefined ? delivery.signature : await signStripePayload(delivery.payload, timestamp));
  return call(STRIPE_WEBHOOK_PATH, {
    method: "POST",
    ...rest,
    rawBody: delivery.payload,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Stripe-Signature": header,
      "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
      ...headers,
    },
  });
}

/**
 * Delivers `customer`'s events from `since` in order (what Stripe's POSTs would do); answers the
 * worker's responses (each read to its end) and the index to continue from.
 */
export async function deliverAll(
  customer: string,
  options: { since?: number } = {},
): Promise<{ responses: { type: string; status: number }[]; next_index: number }> {
  const { data, next_index } = await stripeDeliveries(customer, options);
  const responses = [];
  for (const delivery of data) {
    const res = await deliver(delivery);
    await res.arrayBuffer();
    responses.push({ type: delivery.type, status: res.status });
  }
  return { responses, next_index };
}

function pageUrl(kind: "checkout" | "portal", urlOrId: string): string {
  return urlOrId.startsWith("http") ? urlOrId : `${stripeStandInUrl()}/${kind}/${urlOrId}`;
}

/** What the hosted Checkout page answers for a GET: its status and HTML. */
export async function checkoutPage(sessionUrlOrId: string): Promise<{ status: number; html: string }> {
  const res = await fetch(pageUrl("checkout", sessionUrlOrId));
  return { status: res.status, html: await res.text() };
}

/**
 * Submits the hosted Checkout page's form, as the customer would: `pay` (default; the subscription
 * starts and its events are signed and kept) or `cancel`. `promotionCode`: a code typed on the page
 * (sessions that allow codes); `card`: add a card where one is optional (card-less trials), default no.
 * Answers the redirect (`location`: success_url with the session id, or cancel_url) or the refusal (`html`).
 */
export async function payCheckout(
  sessionUrlOrId: string,
  options: { action?: "pay" | "cancel"; promotionCode?: string; card?: boolean } = {},
): Promise<{ status: number; location: string | null; html: string }> {
  const form = new URLSearchParams({ action: options.action ?? "pay" });
  if (options.promotionCode) form.set("promotion_code", options.promotionCode);
  if (options.card !== undefined) form.set("card", options.card ? "on" : "off");
  const res = await fetch(pageUrl("checkout", sessionUrlOrId), {
    method: "POST",
    body: form,
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("Location"), html: await res.text() };
}

/** The stand-in's Checkout Session `id` (its `customer`, `subscription` once paid, `status` …). */
export function stripeCheckoutSession(id: string): Promise<any> {
  return stripeApi(`/v1/checkout/sessions/${encodeURIComponent(id)}`);
}

/**
 * The whole of a customer's checkout as a test needs it: pays the session on its hosted page (see
 * payCheckout for `options`), then delivers the events that caused to the worker's webhook endpoint,
 * in order. Answers the redirect, the session's customer and subscription, and the worker's answers.
 */
export async function completeCheckout(
  sessionUrlOrId: string,
  options: { promotionCode?: string; card?: boolean } = {},
): Promise<{
  location: string | null;
  customer: string;
  subscription: string;
  delivered: { type: string; status: number }[];
}> {
  const id = sessionUrlOrId.split("/").pop()!;
  const before = await stripeCheckoutSession(id);
  // The index the customer's new deliveries start at (nothing is read: `since` is past the end).
  const { next_index } = await control<{ next_index: number }>(
    "GET",
    `/deliveries?since=${Number.MAX_SAFE_INTEGER}`,
  );
  const paid = await payCheckout(sessionUrlOrId, options);
  if (paid.status !== 303)
    throw new Error(`stripe stand-in: checkout not paid (${paid.status}): ${paid.html}`);
  const session = await stripeCheckoutSession(id);
  const customer = (session.customer ?? before.customer) as string;
  const { responses } = await deliverAll(customer, { since: next_index });
  return { location: paid.location, customer, subscription: session.subscription, delivered: responses };
}

/**
 * Submits the billing portal's form for `subscription`: cancel at period end (`renew` undoes it),
 * cancel now, or change the price (interval) and seats. Answers the redirect to `return_url`.
 */
export async function portalAction(
  portalUrlOrId: string,
  options:
    | { action: "cancel_at_period_end" | "renew" | "cancel_now"; subscription: string }
    | { action: "update"; subscription: string; price?: string; quantity?: number }
    | { action: "return" },
): Promise<{ status: number; location: string | null; html: string }> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(options)) if (v !== undefined) form.set(k, String(v));
  const res = await fetch(pageUrl("portal", portalUrlOrId), {
    method: "POST",
    body: form,
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("Location"), html: await res.text() };
}

export type LifecycleMove =
  | "end_trial"
  | "trial_will_end"
  | "renew"
  | "fail_payment"
  | "recover"
  | "mark_unpaid"
  | "cancel";

/** One life-cycle move of a subscription (see scripts/stripe-standin/control.mjs); its new state and deliveries. */
export function moveSubscription(
  subscription: string,
  move: LifecycleMove,
): Promise<{ subscription: any; deliveries: StandInDelivery[] }> {
  return control("POST", `/subscriptions/${encodeURIComponent(subscription)}/${move}`);
}

/** The moves by name: `await stripeLifecycle.endTrial(sub)` … */
export const stripeLifecycle = {
  /** trialing → active + invoice.paid, or (no card) past_due + invoice.payment_failed. */
  endTrial: (sub: string) => moveSubscription(sub, "end_trial"),
  /** customer.subscription.trial_will_end. */
  trialWillEnd: (sub: string) => moveSubscription(sub, "trial_will_end"),
  /** The period ends: renews (invoice), or ends a subscription set to cancel at period end. */
  renew: (sub: string) => moveSubscription(sub, "renew"),
  /** → past_due + invoice.payment_failed. */
  failPayment: (sub: string) => moveSubscription(sub, "fail_payment"),
  /** The open invoice is paid: → active + invoice.paid. */
  recover: (sub: string) => moveSubscription(sub, "recover"),
  /** → unpaid. */
  markUnpaid: (sub: string) => moveSubscription(sub, "mark_unpaid"),
  /** → canceled + customer.subscription.deleted. */
  cancel: (sub: string) => moveSubscription(sub, "cancel"),
};

/** Gives `customer` a test card (its default payment method), or takes every card away. */
export function setPaymentMethod(customer: string, present: boolean): Promise<unknown> {
  return control(present ? "POST" : "DELETE", `/customers/${encodeURIComponent(customer)}/payment_method`);
}

export interface TestPromotionCodeOptions {
  /** Default: a fresh unique code (`TEST…`). */
  code?: string;
  percent_off?: number;
  amount_off?: number;
  currency?: string;
  duration?: "once" | "repeating" | "forever";
  duration_in_months?: number;
  max_redemptions?: number;
  /** Redemptions already counted (an exhausted code: equal to max_redemptions). */
  times_redeemed?: number;
  /** Unix seconds; may be in the past (an expired code). */
  expires_at?: number;
  redeem_by?: number;
  active?: boolean;
  first_time_transaction?: boolean;
  minimum_amount?: number;
  minimum_amount_currency?: string;
  /** Product ids the coupon is restricted to (e.g. a product other than Lingua Pro: not applicable). */
  applies_to_products?: string[];
  customer?: string;
}

/** A coupon and promotion code of this test's own (10 % off once unless said otherwise). */
export function createTestPromotionCode(
  options: TestPromotionCodeOptions = {},
): Promise<{ promotion_code: any; coupon: any }> {
  return control("POST", "/promotion_codes", options);
}
