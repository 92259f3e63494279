// What `POST /v1/checkout/sessions` reads and checks (checkout.mjs makes the session): its parameters,
// line items, discounts and trial, each refused with Stripe's message and `param` when it does not fit.
import { StripeError } from "./errors.mjs";
import { checkKnown, readBoolean, readInteger, readString } from "./form.mjs";
import { checkRedeemable } from "./promotions.mjs";

export const CHECKOUT_PARAMS = [
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

export function readUrl(value, param, required) {
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

export /** The order a session or subscription is for, as promotion-code checks see it. */
function orderOf(customerId, items) {
  return {
    customer: customerId,
    amount: items.reduce((sum, it) => sum + it.price.unit_amount * it.quantity, 0),
    currency: items[0].price.currency,
    products: items.map((it) => it.price.product),
  };
}

/** `line_items`: recurring, active prices in one currency, each with its quantity. */
export function readLineItems(s, p) {
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
  return items;
}

/** `allow_promotion_codes`, or one discount (a coupon or a promotion code redeemable on this order). */
export function readDiscounts(s, p, customer, items) {
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
  return { allowPromotionCodes, discounts };
}

/** `subscription_data`'s trial: days or an end (not both), and what happens at its end without a card. */
export function readTrial(s, sd) {
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
  return { trialDays, trialEnd, trialBehavior };
}

/** What `discount` takes off `subtotal`. */
export function discountOn(s, discount, subtotal) {
  if (!discount) return 0;
  const coupon = s.store.get("coupon", discount.coupon);
  return coupon.percent_off !== null
    ? Math.round((subtotal * coupon.percent_off) / 100)
    : Math.min(coupon.amount_off, subtotal);
}
