// Checkout Sessions (subscription mode): made from the checked parameters (checkout-params.mjs), read,
// listed and expired. checkout-page.mjs holds what the hosted page does, portal.mjs the billing portal.
import {
  CHECKOUT_PARAMS,
  discountOn,
  orderOf,
  readDiscounts,
  readLineItems,
  readTrial,
  readUrl,
} from "./checkout-params.mjs";
import { StripeError } from "./errors.mjs";
import { checkKnown, mergeMetadata, readInteger, readString } from "./form.mjs";
import { present } from "./present.mjs";
import { newId, paginate } from "./store.mjs";

/** A session's `customer_details`, from its customer. */
export function customerDetails(customer) {
  return {
    address: null,
    email: customer.email,
    name: customer.name,
    phone: null,
    tax_exempt: "none",
    tax_ids: [],
  };
}

/** `POST /v1/checkout/sessions` (subscription mode). */
export function createCheckoutSession(s, p) {
  checkKnown(p, CHECKOUT_PARAMS);
  const mode = readString(p.mode, "mode", { required: true, oneOf: ["payment", "setup", "subscription"] });
  if (mode !== "subscription") {
    throw StripeError.invalid("The stand-in emulates Checkout in subscription mode only.", "mode");
  }
  const uiMode = readString(p.ui_mode, "ui_mode", { oneOf: ["hosted", "embedded", "custom"] }) ?? "hosted";
  if (uiMode !== "hosted")
    throw StripeError.invalid("The stand-in emulates hosted Checkout only.", "ui_mode");
  const customerId = readString(p.customer, "customer");
  const customer = customerId ? s.store.get("customer", customerId, { param: "customer" }) : undefined;
  if (customer && p.customer_email) {
    throw StripeError.invalid(
      "You may only specify one of these parameters: customer, customer_email.",
      "customer_email",
    );
  }
  const items = readLineItems(s, p);
  const { allowPromotionCodes, discounts } = readDiscounts(s, p, customer, items);
  const sd = p.subscription_data ?? {};
  const { trialDays, trialEnd, trialBehavior } = readTrial(s, sd);
  const collection =
    readString(p.payment_method_collection, "payment_method_collection", {
      oneOf: ["always", "if_required"],
    }) ?? "always";
  const clientReference = readString(p.client_reference_id, "client_reference_id") ?? null;
  if (clientReference && clientReference.length > 200) {
    throw StripeError.invalid("client_reference_id must be at most 200 characters.", "client_reference_id");
  }
  const now = s.now();
  const expiresAt = readInteger(p.expires_at, "expires_at") ?? now + 24 * 3600;
  if (expiresAt < now + 30 * 60 || expiresAt > now + 24 * 3600) {
    throw StripeError.invalid("expires_at must be between 30 minutes and 24 hours from now.", "expires_at");
  }
  const trialing = trialDays !== undefined || trialEnd !== undefined;
  const subtotal = orderOf(undefined, items).amount;
  const discountAmount = discountOn(s, discounts[0], subtotal);
  const id = newId("cs_test_", 58);
  const session = s.store.put(
    {
      id,
      object: "checkout.session",
      adaptive_pricing: null,
      after_expiration: null,
      allow_promotion_codes: allowPromotionCodes ?? null,
      amount_subtotal: trialing ? 0 : subtotal,
      amount_total: trialing ? 0 : subtotal - discountAmount,
      automatic_tax: { enabled: false, liability: null, provider: null, status: null },
      billing_address_collection: null,
      cancel_url: readUrl(p.cancel_url, "cancel_url", false),
      client_reference_id: clientReference,
      client_secret: null,
      collected_information: null,
      consent: null,
      consent_collection: null,
      created: now,
      currency: items[0].price.currency,
      currency_conversion: null,
      custom_fields: [],
      custom_text: {
        after_submit: null,
        shipping_address: null,
        submit: null,
        terms_of_service_acceptance: null,
      },
      customer: customer?.id ?? null,
      customer_account: null,
      customer_creation: customer ? null : "always",
      customer_details: customer ? customerDetails(customer) : null,
      customer_email: readString(p.customer_email, "customer_email") ?? null,
      discounts,
      expires_at: expiresAt,
      invoice: null,
      invoice_creation: null,
      line_items: {
        object: "list",
        data: items.map(({ price, quantity }) => ({
          id: newId("li_", 24),
          object: "item",
          amount_discount: 0,
          amount_subtotal: price.unit_amount * quantity,
          amount_tax: 0,
          amount_total: price.unit_amount * quantity,
          currency: price.currency,
          description: price.nickname ?? price.id,
          price: structuredClone(price),
          quantity,
        })),
        has_more: false,
        url: `/v1/checkout/sessions/${id}/line_items`,
      },
      livemode: false,
      locale: readString(p.locale, "locale") ?? null,
      metadata: mergeMetadata({}, p.metadata),
      mode,
      origin_context: null,
      payment_intent: null,
      payment_link: null,
      payment_method_collection: collection,
      payment_method_configuration_details: null,
      payment_method_options: { card: { request_three_d_secure: "automatic" } },
      payment_method_types: ["card"],
      payment_status: "unpaid",
      permissions: null,
      phone_number_collection: { enabled: false },
      recovered_from: null,
      saved_payment_method_options: null,
      setup_intent: null,
      shipping_address_collection: null,
      shipping_cost: null,
      shipping_options: [],
      status: "open",
      submit_type: null,
      subscription: null,
      success_url: readUrl(p.success_url, "success_url", true),
      total_details: { amount_discount: trialing ? 0 : discountAmount, amount_shipping: 0, amount_tax: 0 },
      ui_mode: "hosted",
      url: `${s.baseUrl()}/checkout/${id}`,
      wallet_options: null,
    },
    {
      items: items.map(({ price, quantity }) => ({ priceId: price.id, quantity })),
      trialDays,
      trialEnd,
      trialBehavior,
      subscriptionMetadata: mergeMetadata({}, sd.metadata, "subscription_data[metadata]"),
    },
  );
  return session;
}

/** A session past its `expires_at` expires (and says so: `checkout.session.expired`) when next read. */
export function refreshSession(s, session) {
  if (session.status === "open" && session.expires_at <= s.now()) {
    session.status = "expired";
    session.url = null;
    s.emit("checkout.session.expired", session);
  }
  return session;
}

export function expireSession(s, id) {
  const session = refreshSession(s, s.store.get("checkout.session", id, { noun: "checkout.session" }));
  if (session.status !== "open") {
    throw StripeError.invalid(`Only Checkout Sessions with a status of open can be expired.`, undefined);
  }
  session.status = "expired";
  session.url = null;
  s.emit("checkout.session.expired", session);
  return session;
}

export function listCheckoutSessions(s, p) {
  checkKnown(p, [
    "customer",
    "subscription",
    "status",
    "payment_intent",
    "payment_link",
    "limit",
    "starting_after",
    "ending_before",
    "expand",
    "created",
    "customer_details",
  ]);
  const items = s.store
    .all("checkout.session")
    .map((o) => refreshSession(s, o))
    .filter(
      (o) =>
        (!p.customer || o.customer === p.customer) &&
        (!p.subscription || o.subscription === p.subscription) &&
        (!p.status || o.status === p.status),
    );
  return paginate(items, p, "/v1/checkout/sessions");
}

export function listSessionLineItems(s, id, p) {
  checkKnown(p, ["limit", "starting_after", "ending_before", "expand"]);
  const session = s.store.get("checkout.session", id, { noun: "checkout.session" });
  return paginate(session.line_items.data, p, `/v1/checkout/sessions/${id}/line_items`);
}

export { present };
