// What Checkout's hosted page shows and what its buttons do: pay (the subscription starts) or leave.
import { customerDetails, refreshSession } from "./checkout.mjs";
import { discountOn, orderOf } from "./checkout-params.mjs";
import { attachCard, createCustomer, hasPaymentMethod } from "./customers.mjs";
import { StripeError } from "./errors.mjs";
import { checkRedeemable } from "./promotions.mjs";
import { createSubscription } from "./subscriptions.mjs";

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
  session.customer_details = customerDetails(customer);
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
