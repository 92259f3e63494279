// Checkout Sessions (subscription mode) and billing portal sessions, and what their hosted pages do
// when the customer submits them: pay (the subscription starts), cancel, or change the subscription.
import { attachCard, checkRedeemable, createCustomer, hasPaymentMethod } from "./catalog.mjs";
import { StripeError } from "./errors.mjs";
import { checkKnown, mergeMetadata, readBoolean, readInteger, readString } from "./form.mjs";
import { present } from "./present.mjs";
import { newId, paginate } from "./store.mjs";
import { cancelSubscription, createSubscription, updateSubscription } from "./subscriptions.mjs";

const CHECKOUT_PARAMS = [
  "adaptive_pricing",
  "after_expiration",
  "allow_promotion_codes",
  "allowed_payment_method_types",
  "automatic_tax",
  "billing_address_collection",
  "branding_settings",
  "cancel_url",
  "client_reference_id",
  "consent_collection",
  "currency",
  "custom_fields",
  "custom_text",
  "customer",
  "customer_account",
  "customer_creation",
  "customer_email",
  "customer_update",
  "discounts",
  "excluded_payment_method_types",
  "expand",
  "expires_at",
  "integration_identifier",
  "invoice_creation",
  "line_items",
  "locale",
  "managed_payments",
  "metadata",
  "mode",
  "name_collection",
  "optional_items",
  "origin_context",
  "payment_intent_data",
  "payment_method_collection",
  "payment_method_configuration",
  "payment_method_data",
  "payment_method_options",
  "payment_method_types",
  "permissions",
  "phone_number_collection",
  "redirect_on_completion",
  "return_url",
  "saved_payment_method_options",
  "setup_intent_data",
  "shipping_address_collection",
  "shipping_options",
  "submit_type",
  "subscription_data",
  "success_url",
  "tax_id_collection",
  "ui_mode",
  "wallet_options",
];

function readUrl(value, param, required) {
  const text = readString(value, param, { required });
  if (text === undefined) return null;
  let url;
  try {
    url = new URL(text.replaceAll("{CHECKOUT_SESSION_ID}", "x"));
  } catch {
    throw StripeError.invalid("Not a valid URL", param, "url_invalid");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw StripeError.invalid("Not a valid URL", param, "url_invalid");
  }
  return text;
}

/** The order a session or subscription is for, as promotion-code checks see it. */
function orderOf(customerId, items) {
  return {
    customer: customerId,
    amount: items.reduce((sum, it) => sum + it.price.unit_amount * it.quantity, 0),
    currency: items[0].price.currency,
    products: items.map((it) => it.price.product),
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
  if (p.line_items === undefined || p.line_items === "") {
    throw StripeError.invalid(
      "line_items is required in subscription mode.",
      "line_items",
      "parameter_missing",
    );
  }
  const lines = Array.isArray(p.line_items) ? p.line_items : [p.line_items];
  const items = lines.map((line, i) => {
    const at = (f) => `line_items[${i}][${f}]`;
    checkKnown(line, [
      "price",
      "quantity",
      "adjustable_quantity",
      "dynamic_tax_rates",
      "tax_rates",
      "price_data",
    ]);
    const price = s.store.get("price", readString(line.price, at("price"), { required: true }), {
      param: at("price"),
    });
    if (price.type !== "recurring") {
      throw StripeError.invalid(
        "You must provide at least one recurring price in `subscription` mode.",
        at("price"),
      );
    }
    if (!price.active) throw StripeError.invalid(`The price \`${price.id}\` is not active.`, at("price"));
    const quantity = readInteger(line.quantity, at("quantity"), { min: 1 }) ?? 1;
    return { price, quantity };
  });
  if (new Set(items.map((it) => it.price.currency)).size > 1) {
    throw StripeError.invalid("All prices must share one currency.", "line_items");
  }
  const allowPromotionCodes = readBoolean(p.allow_promotion_codes, "allow_promotion_codes");
  if (allowPromotionCodes && p.discounts !== undefined && p.discounts !== "") {
    throw StripeError.invalid(
      "You may only specify one of these parameters: allow_promotion_codes, discounts.",
      "allow_promotion_codes",
    );
  }
  const discounts = [];
  if (p.discounts !== undefined && p.discounts !== "") {
    const list = Array.isArray(p.discounts) ? p.discounts : [p.discounts];
    if (list.length > 1) throw StripeError.invalid("You may only specify one discount.", "discounts");
    const d = list[0];
    if (d.promotion_code) {
      const param = "discounts[0][promotion_code]";
      const promo = s.store.get("promotion_code", d.promotion_code, { param });
      const coupon = checkRedeemable(s, promo, orderOf(customer?.id, items), param);
      discounts.push({ coupon: coupon.id, promotion_code: promo.id });
    } else if (d.coupon) {
      const coupon = s.store.get("coupon", d.coupon, { param: "discounts[0][coupon]" });
      discounts.push({ coupon: coupon.id, promotion_code: null });
    } else {
      throw StripeError.invalid("Each discount needs a coupon or a promotion_code.", "discounts[0]");
    }
  }
  const sd = p.subscription_data ?? {};
  checkKnown(sd, [
    "trial_period_days",
    "trial_end",
    "metadata",
    "trial_settings",
    "description",
    "application_fee_percent",
    "billing_cycle_anchor",
    "default_tax_rates",
    "invoice_settings",
    "on_behalf_of",
    "proration_behavior",
    "transfer_data",
    "billing_mode",
    "pending_invoice_item_interval",
  ]);
  const trialDays = readInteger(sd.trial_period_days, "subscription_data[trial_period_days]", { min: 1 });
  if (trialDays !== undefined && trialDays > 730) {
    throw StripeError.invalid(
      "The maximum number of trial period days is 730.",
      "subscription_data[trial_period_days]",
    );
  }
  const trialEnd = readInteger(sd.trial_end, "subscription_data[trial_end]");
  if (trialEnd !== undefined && trialDays !== undefined) {
    throw StripeError.invalid(
      "You may only specify one of these parameters: trial_end, trial_period_days.",
      "subscription_data[trial_end]",
    );
  }
  if (trialEnd !== undefined && trialEnd < s.now() + 2 * 86_400) {
    throw StripeError.invalid(
      "trial_end must be at least 48 hours in the future.",
      "subscription_data[trial_end]",
    );
  }
  const trialBehavior = readString(
    sd.trial_settings?.end_behavior?.missing_payment_method,
    "subscription_data[trial_settings][end_behavior][missing_payment_method]",
    { oneOf: ["cancel", "create_invoice", "pause"] },
  );
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
      customer_details: customer
        ? {
            address: null,
            email: customer.email,
            name: customer.name,
            phone: null,
            tax_exempt: "none",
            tax_ids: [],
          }
        : null,
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

function discountOn(s, discount, subtotal) {
  if (!discount) return 0;
  const coupon = s.store.get("coupon", discount.coupon);
  return coupon.percent_off !== null
    ? Math.round((subtotal * coupon.percent_off) / 100)
    : Math.min(coupon.amount_off, subtotal);
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

/** What the hosted page shows for `session`: its lines, trial, discount and whether a card is asked for. */
export function describeSession(s, session) {
  const priv = s.store.private(session.id);
  const items = priv.items.map(({ priceId, quantity }) => {
    const price = s.store.get("price", priceId);
    return { price, product: s.store.get("product", price.product), quantity };
  });
  const discount = session.discounts[0];
  return {
    items,
    trialDays:
      priv.trialDays ?? (priv.trialEnd ? Math.round((priv.trialEnd - session.created) / 86_400) : undefined),
    coupon: discount ? s.store.get("coupon", discount.coupon) : undefined,
    promotionCode: discount?.promotion_code
      ? s.store.get("promotion_code", discount.promotion_code)
      : undefined,
    cardRequired: !(session.payment_method_collection === "if_required" && (priv.trialDays || priv.trialEnd)),
  };
}

/**
 * The customer pays on the hosted page: the subscription starts (trialing or active), the session
 * completes, and the events follow in Stripe's order — `customer.subscription.created`, the first
 * invoice's `invoice.paid`, `checkout.session.completed`. `form`: `promotion_code` (a code the customer
 * typed, when the session allows codes), `card` (`on`: add a card where one is optional; `off`: none).
 * Answers the URL to redirect to.
 */
export function paySession(s, id, form) {
  const session = refreshSession(s, s.store.get("checkout.session", id, { noun: "checkout.session" }));
  if (session.status !== "open") {
    throw new StripeError(409, "invalid_request_error", `This Checkout Session is ${session.status}.`, {
      code: "checkout_session_not_open",
    });
  }
  const priv = s.store.private(session.id);
  const view = describeSession(s, session);
  let customer = session.customer ? s.store.get("customer", session.customer) : undefined;
  const items = view.items.map(({ price, quantity }) => ({ price, quantity }));
  let promo = view.promotionCode;
  const typed = typeof form.promotion_code === "string" ? form.promotion_code.trim() : "";
  if (typed) {
    if (!session.allow_promotion_codes) {
      throw StripeError.invalid("This Checkout Session does not accept promotion codes.", "promotion_code");
    }
    promo = s.store
      .all("promotion_code")
      .find((o) => o.code.toLowerCase() === typed.toLowerCase() && o.active);
    if (!promo) throw StripeError.invalid("This code is invalid.", "promotion_code");
    checkRedeemable(s, promo, orderOf(customer?.id, items), "promotion_code");
  } else if (promo) {
    // The code chosen at creation is checked again: it may have run out meanwhile.
    checkRedeemable(s, promo, orderOf(customer?.id, items), "promotion_code");
  }
  if (!customer) customer = createCustomer(s, { email: session.customer_email ?? undefined });
  const wantsCard = view.cardRequired ? form.card !== "off" : form.card === "on";
  let paymentMethod = null;
  if (wantsCard) paymentMethod = attachCard(s, customer).id;
  else if (hasPaymentMethod(s, customer.id)) paymentMethod = customer.invoice_settings.default_payment_method;
  if (view.cardRequired && !paymentMethod) {
    throw new StripeError(402, "card_error", "Your card was declined.", {
      code: "card_declined",
      declineCode: "generic_decline",
    });
  }
  const { subscription, invoice } = createSubscription(s, {
    customer,
    items,
    trialDays: priv.trialDays,
    trialEnd: priv.trialEnd,
    metadata: priv.subscriptionMetadata,
    promo,
    paymentMethod,
    checkoutSession: session.id,
    trialSettings: priv.trialBehavior,
  });
  session.status = "complete";
  session.customer = customer.id;
  session.customer_details = {
    address: null,
    email: customer.email,
    name: customer.name,
    phone: null,
    tax_exempt: "none",
    tax_ids: [],
  };
  session.subscription = subscription.id;
  session.payment_status = subscription.status === "trialing" ? "no_payment_required" : "paid";
  session.url = null;
  if (promo && !session.discounts.length) {
    session.discounts = [{ coupon: promo.promotion.coupon, promotion_code: promo.id }];
    const discount = discountOn(s, session.discounts[0], session.amount_subtotal);
    session.amount_total = session.amount_subtotal - discount;
    session.total_details.amount_discount = discount;
  }
  s.emit("customer.subscription.created", subscription);
  s.emit(invoice.status === "paid" ? "invoice.paid" : "invoice.payment_failed", invoice);
  s.emit("checkout.session.completed", session);
  return session.success_url.replaceAll("{CHECKOUT_SESSION_ID}", session.id);
}

/** The customer leaves the hosted page: the session stays open; answers `cancel_url`. */
export function cancelSession(s, id) {
  const session = refreshSession(s, s.store.get("checkout.session", id, { noun: "checkout.session" }));
  return session.cancel_url ?? session.success_url;
}

// ---------- the billing portal

/** `POST /v1/billing_portal/sessions`. */
export function createPortalSession(s, p) {
  checkKnown(p, [
    "customer",
    "return_url",
    "configuration",
    "flow_data",
    "locale",
    "on_behalf_of",
    "expand",
    "customer_account",
  ]);
  const customer = s.store.get("customer", readString(p.customer, "customer", { required: true }), {
    param: "customer",
  });
  const id = newId("bps_", 24);
  return s.store.put({
    id,
    object: "billing_portal.session",
    configuration: "bpc_standin",
    created: s.now(),
    customer: customer.id,
    customer_account: null,
    flow: null,
    livemode: false,
    locale: readString(p.locale, "locale") ?? null,
    on_behalf_of: null,
    return_url: readUrl(p.return_url, "return_url", false),
    url: `${s.baseUrl()}/portal/${id}`,
  });
}

/** The portal's subscriptions: those of its customer that have not ended. */
export function portalSubscriptions(s, session) {
  return s.store
    .all("subscription")
    .filter((o) => o.customer === session.customer && o.status !== "canceled");
}

/**
 * A portal form: `action` = `cancel_at_period_end` | `renew` (undo it) | `cancel_now` | `update`
 * (`price`, `quantity`), on `subscription`. Answers the URL to return to.
 */
export function portalAction(s, id, form) {
  const session = s.store.get("billing_portal.session", id, { noun: "billing_portal.session" });
  if (form.action !== "return") {
    const sub = portalSubscriptions(s, session).find((o) => o.id === form.subscription);
    if (!sub) throw StripeError.missingParam("subscription", form.subscription, "subscription");
    if (form.action === "cancel_at_period_end")
      updateSubscription(s, sub.id, { cancel_at_period_end: "true" });
    else if (form.action === "renew") updateSubscription(s, sub.id, { cancel_at_period_end: "false" });
    else if (form.action === "cancel_now") cancelSubscription(s, sub.id);
    else if (form.action === "update") {
      const change = { id: sub.items.data[0].id };
      if (form.price) change.price = form.price;
      if (form.quantity) change.quantity = form.quantity;
      updateSubscription(s, sub.id, { items: [change], proration_behavior: "create_prorations" });
    } else throw StripeError.invalid("Unknown action.", "action");
  }
  return session.return_url ?? `${s.baseUrl()}/portal/${id}`;
}

export { present };
