// Coupons and promotion codes, and the checks a redemption passes. Each function takes the decoded
// parameters and answers a stored object (the router presents it with `expand[]`) or throws a StripeError.

import { StripeError } from "./errors.mjs";
import { checkKnown, mergeMetadata, readBoolean, readInteger, readNumber, readString } from "./form.mjs";
import { newId, paginate } from "./store.mjs";

// ---------- coupons and promotion codes

export function createCoupon(s, p, { seed = false } = {}) {
  checkKnown(p, [
    "id",
    "percent_off",
    "amount_off",
    "currency",
    "duration",
    "duration_in_months",
    "max_redemptions",
    "redeem_by",
    "name",
    "applies_to",
    "metadata",
    "expand",
    "currency_options",
  ]);
  const percentOff = readNumber(p.percent_off, "percent_off");
  const amountOff = readInteger(p.amount_off, "amount_off", { min: 1 });
  if ((percentOff === undefined) === (amountOff === undefined)) {
    throw StripeError.invalid("You must pass exactly one of percent_off or amount_off.", "percent_off");
  }
  if (percentOff !== undefined && (percentOff <= 0 || percentOff > 100)) {
    throw StripeError.invalid("percent_off must be greater than 0 and at most 100.", "percent_off");
  }
  const currency = readString(p.currency, "currency")?.toLowerCase();
  if (amountOff !== undefined && !currency) {
    throw StripeError.invalid(
      "You must pass currency when passing amount_off.",
      "currency",
      "parameter_missing",
    );
  }
  const duration = readString(p.duration, "duration", { oneOf: ["once", "repeating", "forever"] }) ?? "once";
  const months = readInteger(p.duration_in_months, "duration_in_months", { min: 1 });
  if (duration === "repeating" && months === undefined) {
    throw StripeError.invalid(
      "You must pass duration_in_months when duration is repeating.",
      "duration_in_months",
      "parameter_missing",
    );
  }
  const redeemBy = readInteger(p.redeem_by, "redeem_by");
  if (redeemBy !== undefined && redeemBy <= s.now() && !seed) {
    throw StripeError.invalid("Redeem by timestamp must be in the future.", "redeem_by");
  }
  const products = p.applies_to?.products;
  if (products !== undefined) {
    for (const [i, id] of [products].flat().entries()) {
      s.store.get("product", id, { param: `applies_to[products][${i}]` });
    }
  }
  const id = readString(p.id, "id") ?? newId("", 8);
  if (s.store.objects.has(id)) {
    throw StripeError.invalid("Coupon already exists.", "id", "resource_already_exists");
  }
  return s.store.put({
    id,
    object: "coupon",
    amount_off: amountOff ?? null,
    applies_to: { products: products === undefined ? [] : [products].flat() },
    created: s.now(),
    currency: amountOff !== undefined ? currency : null,
    duration,
    duration_in_months: duration === "repeating" ? months : null,
    livemode: false,
    max_redemptions: readInteger(p.max_redemptions, "max_redemptions", { min: 1 }) ?? null,
    metadata: mergeMetadata({}, p.metadata),
    name: readString(p.name, "name") ?? null,
    percent_off: percentOff ?? null,
    redeem_by: redeemBy ?? null,
    times_redeemed: 0,
    valid: true,
  });
}

export function listCoupons(s, p) {
  checkKnown(p, ["limit", "starting_after", "ending_before", "expand", "created"]);
  return paginate(s.store.all("coupon"), p, "/v1/coupons");
}

/** A coupon's `valid`, which Stripe keeps current: false past `redeem_by` or `max_redemptions`. */
export function refreshCoupon(s, coupon) {
  coupon.valid =
    !(coupon.redeem_by !== null && coupon.redeem_by <= s.now()) &&
    !(coupon.max_redemptions !== null && coupon.times_redeemed >= coupon.max_redemptions);
  return coupon;
}

export function createPromotionCode(s, p, { seed = false } = {}) {
  checkKnown(p, [
    "promotion",
    "coupon",
    "code",
    "active",
    "customer",
    "expires_at",
    "max_redemptions",
    "restrictions",
    "metadata",
    "expand",
  ]);
  // The current API names the coupon `promotion[coupon]` (with `promotion[type]=coupon`); the
  // top-level `coupon` of older API versions is accepted too.
  const couponId = p.promotion?.coupon ?? p.coupon;
  const param = p.promotion ? "promotion[coupon]" : "coupon";
  if (p.promotion && p.promotion.type !== undefined && p.promotion.type !== "coupon") {
    throw StripeError.invalid("Invalid promotion[type]: must be coupon", "promotion[type]");
  }
  const coupon = s.store.get("coupon", readString(couponId, param, { required: true }), { param });
  const code = readString(p.code, "code") ?? newId("", 8).toUpperCase();
  if (!/^[a-zA-Z0-9_-]{1,500}$/.test(code)) {
    throw StripeError.invalid("The code may only contain letters, digits, dashes and underscores.", "code");
  }
  if (s.store.all("promotion_code").some((o) => o.active && o.code.toLowerCase() === code.toLowerCase())) {
    throw StripeError.invalid(
      "An active promotion code with `code` already exists.",
      "code",
      "resource_already_exists",
    );
  }
  if (p.customer) s.store.get("customer", p.customer, { param: "customer" });
  const expiresAt = readInteger(p.expires_at, "expires_at");
  if (expiresAt !== undefined && expiresAt <= s.now() && !seed) {
    throw StripeError.invalid("The expiration date must be in the future.", "expires_at");
  }
  const r = p.restrictions ?? {};
  const minimum = readInteger(r.minimum_amount, "restrictions[minimum_amount]", { min: 1 });
  const minimumCurrency = readString(r.minimum_amount_currency, "restrictions[minimum_amount_currency]");
  if (minimum !== undefined && !minimumCurrency) {
    throw StripeError.invalid(
      "You must pass minimum_amount_currency when passing minimum_amount.",
      "restrictions[minimum_amount_currency]",
      "parameter_missing",
    );
  }
  return s.store.put({
    id: newId("promo_", 24),
    object: "promotion_code",
    active: readBoolean(p.active, "active") ?? true,
    code,
    created: s.now(),
    customer: p.customer ?? null,
    customer_account: null,
    expires_at: expiresAt ?? null,
    livemode: false,
    max_redemptions: readInteger(p.max_redemptions, "max_redemptions", { min: 1 }) ?? null,
    metadata: mergeMetadata({}, p.metadata),
    promotion: { coupon: coupon.id, type: "coupon" },
    restrictions: {
      first_time_transaction:
        readBoolean(r.first_time_transaction, "restrictions[first_time_transaction]") ?? false,
      minimum_amount: minimum ?? null,
      minimum_amount_currency: minimum !== undefined ? minimumCurrency.toLowerCase() : null,
    },
    times_redeemed: 0,
  });
}

export function updatePromotionCode(s, id, p) {
  checkKnown(p, ["active", "metadata", "restrictions", "expand"]);
  const promo = s.store.get("promotion_code", id);
  const active = readBoolean(p.active, "active");
  if (active === true && !promo.active) {
    throw StripeError.invalid("A promotion code cannot be reactivated once deactivated.", "active");
  }
  if (active === false) promo.active = false;
  promo.metadata = mergeMetadata(promo.metadata, p.metadata);
  return promo;
}

export function listPromotionCodes(s, p) {
  checkKnown(p, [
    "active",
    "code",
    "coupon",
    "customer",
    "limit",
    "starting_after",
    "ending_before",
    "expand",
    "created",
  ]);
  const active = readBoolean(p.active, "active");
  const items = s.store.all("promotion_code").filter(
    (o) =>
      (active === undefined || o.active === active) &&
      // Stripe matches codes case-insensitively.
      (!p.code || o.code.toLowerCase() === String(p.code).toLowerCase()) &&
      (!p.coupon || o.promotion.coupon === p.coupon) &&
      (!p.customer || o.customer === p.customer),
  );
  return paginate(items, p, "/v1/promotion_codes");
}

/**
 * Whether `promo` may be redeemed for an order: the checks Stripe makes when a code is applied at
 * checkout or to a subscription. Throws a 400 naming `param`; `order` is `{ customer, amount,
 * currency, products }` (amount before discounts, in minor units).
 */
export function checkRedeemable(s, promo, order, param) {
  const coupon = refreshCoupon(s, s.store.get("coupon", promo.promotion.coupon));
  // Only `coupon_expired` is one of Stripe's documented codes; the other refusals carry none, as at Stripe.
  const refuse = (message, code) => {
    throw StripeError.invalid(message, param, code);
  };
  if (!promo.active) refuse("This promotion code is inactive.");
  if (promo.expires_at !== null && promo.expires_at <= s.now())
    refuse("This promotion code has expired.", "coupon_expired");
  if (promo.max_redemptions !== null && promo.times_redeemed >= promo.max_redemptions) {
    refuse("This promotion code has been redeemed the maximum number of times.", "coupon_expired");
  }
  if (!coupon.valid) refuse("This promotion code's coupon is no longer valid.", "coupon_expired");
  if (promo.customer && promo.customer !== order.customer) {
    refuse("This promotion code cannot be redeemed by this customer.");
  }
  if (promo.restrictions.first_time_transaction && order.customer && !isFirstTime(s, order.customer)) {
    refuse("This promotion code can only be redeemed by first-time customers.");
  }
  const { minimum_amount: minimum, minimum_amount_currency: currency } = promo.restrictions;
  if (minimum !== null && (order.currency !== currency || order.amount < minimum)) {
    refuse(
      `This promotion code requires a minimum order of ${minimum} ${currency} (minor units).`,
      "promotion_code_minimum_amount",
    );
  }
  const products = coupon.applies_to?.products ?? [];
  if (products.length > 0 && !order.products.some((id) => products.includes(id))) {
    refuse("This promotion code does not apply to the products of this order.");
  }
  if (coupon.amount_off !== null && coupon.currency !== order.currency) {
    refuse("This promotion code's coupon is in another currency.");
  }
  return coupon;
}

/** A first-time customer has never had a subscription nor paid an invoice. */
export function isFirstTime(s, customerId) {
  return (
    !s.store.all("subscription").some((o) => o.customer === customerId) &&
    !s.store.all("invoice").some((o) => o.customer === customerId && o.amount_paid > 0)
  );
}

/** Counts one redemption of `promo` and of its coupon. */
export function redeem(s, promo) {
  promo.times_redeemed += 1;
  const coupon = s.store.get("coupon", promo.promotion.coupon);
  coupon.times_redeemed += 1;
  refreshCoupon(s, coupon);
}
