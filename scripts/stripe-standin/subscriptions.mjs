// Subscriptions (created by a paid Checkout Session; retrieved, listed, updated, cancelled through the
// API and the portal) and their discounts. Each change emits what Stripe sends for it
// (`customer.subscription.created|updated|deleted`, then the invoice's `invoice.paid` or
// `invoice.payment_failed`).
import { hasPaymentMethod } from "./customers.mjs";
import { StripeError } from "./errors.mjs";
import { checkKnown, mergeMetadata, readBoolean, readInteger, readString } from "./form.mjs";
import { emitInvoice, makeInvoice } from "./invoices.mjs";
import { endTrialState } from "./lifecycle.mjs";
import { previousAttributes } from "./present.mjs";
import { checkRedeemable, redeem } from "./promotions.mjs";
import { deepCopy, newId, paginate } from "./store.mjs";
import {
  addInterval,
  DAY,
  notCanceled,
  periodOf,
  planOf,
  setPeriod,
  subtotalOf,
} from "./subscription-state.mjs";

function makeItem(s, subscriptionId, price, quantity, period) {
  return {
    id: newId("si_", 14),
    object: "subscription_item",
    billing_thresholds: null,
    created: s.now(),
    current_period_end: period.end,
    current_period_start: period.start,
    discounts: [],
    metadata: {},
    plan: planOf(price),
    price: deepCopy(price),
    quantity,
    subscription: subscriptionId,
    tax_rates: [],
  };
}

function recurringPrice(s, id, param) {
  const price = s.store.get("price", id, { param });
  if (price.type !== "recurring") {
    throw StripeError.invalid(`The price \`${id}\` is not a recurring price.`, param);
  }
  if (!price.active) throw StripeError.invalid(`The price \`${id}\` is not active.`, param);
  return price;
}

/** A Discount (`di_…`) on `sub` from a promotion code (or a bare coupon), counted as a redemption. */
function addDiscount(s, sub, { promo, coupon, checkoutSession = null }) {
  const couponObject = coupon ?? s.store.get("coupon", promo.promotion.coupon);
  const start = s.now();
  const discount = s.store.put({
    id: newId("di_", 24),
    object: "discount",
    checkout_session: checkoutSession,
    customer: sub.customer,
    customer_account: null,
    end:
      couponObject.duration === "repeating"
        ? addInterval(start, "month", couponObject.duration_in_months)
        : null,
    invoice: null,
    invoice_item: null,
    promotion_code: promo?.id ?? null,
    source: { coupon: couponObject.id, type: "coupon" },
    start,
    subscription: sub.id,
    subscription_item: null,
  });
  s.store.private(discount.id).once = couponObject.duration === "once";
  sub.discounts = [discount.id];
  if (promo) redeem(s, promo);
  else couponObject.times_redeemed += 1;
  return discount;
}

/**
 * A new subscription for `customer` (from a completed Checkout Session): `trialing` for
 * `trialDays`, else `active` with its first invoice paid (or `incomplete` when it cannot be).
 * Emits nothing: the caller emits `customer.subscription.created` and the invoice's event in order.
 */
export function createSubscription(
  s,
  { customer, items, trialDays, trialEnd, metadata, promo, paymentMethod, checkoutSession, trialSettings },
) {
  const now = s.now();
  const id = newId("sub_", 24);
  const end = trialEnd ?? (trialDays ? now + trialDays * DAY : null);
  const sub = {
    id,
    object: "subscription",
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: end ?? now,
    billing_cycle_anchor_config: null,
    billing_mode: { flexible: null, type: "classic" },
    billing_thresholds: null,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: "charge_automatically",
    created: now,
    currency: items[0].price.currency,
    customer: customer.id,
    customer_account: null,
    days_until_due: null,
    default_payment_method: paymentMethod ?? null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    ended_at: null,
    invoice_settings: { account_tax_ids: null, issuer: { type: "self" } },
    items: {
      object: "list",
      data: [],
      has_more: false,
      total_count: items.length,
      url: `/v1/subscription_items?subscription=${id}`,
    },
    latest_invoice: null,
    livemode: false,
    metadata: metadata ?? {},
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: {
      payment_method_options: null,
      payment_method_types: null,
      save_default_payment_method: "off",
    },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: now,
    status: end ? "trialing" : "active",
    test_clock: null,
    transfer_data: null,
    trial_end: end,
    trial_settings: {
      end_behavior: { missing_payment_method: trialSettings ?? "create_invoice" },
    },
    trial_start: end ? now : null,
  };
  sub.items.data = items.map(({ price, quantity }) =>
    makeItem(
      s,
      id,
      price,
      quantity,
      end
        ? { start: now, end }
        : { start: now, end: addInterval(now, price.recurring.interval, price.recurring.interval_count) },
    ),
  );
  s.store.put(sub);
  if (promo) addDiscount(s, sub, { promo, checkoutSession });
  const period = periodOf(sub);
  const invoice = makeInvoice(s, sub, {
    reason: "subscription_create",
    periodStart: period.start,
    periodEnd: period.end,
    amount: end ? 0 : undefined,
  });
  if (invoice.status !== "paid") sub.status = "incomplete";
  return { subscription: sub, invoice };
}

// ---------- the API

export function listSubscriptions(s, p) {
  checkKnown(p, [
    "customer",
    "status",
    "price",
    "limit",
    "starting_after",
    "ending_before",
    "expand",
    "created",
    "current_period_end",
    "current_period_start",
    "collection_method",
    "test_clock",
    "automatic_tax",
  ]);
  const status = readString(p.status, "status", {
    oneOf: [
      "active",
      "all",
      "canceled",
      "ended",
      "incomplete",
      "incomplete_expired",
      "past_due",
      "paused",
      "trialing",
      "unpaid",
    ],
  });
  const items = s.store.all("subscription").filter(
    (o) =>
      (!p.customer || o.customer === p.customer) &&
      (!p.price || o.items.data.some((i) => i.price.id === p.price)) &&
      // Without `status`, Stripe lists every subscription that is not canceled.
      (status === "all" ||
        (status === "ended"
          ? ["canceled", "incomplete_expired"].includes(o.status)
          : status
            ? o.status === status
            : o.status !== "canceled")),
  );
  return paginate(items, p, "/v1/subscriptions");
}

/** `POST /v1/subscriptions/:id`. */
export function updateSubscription(s, id, p) {
  checkKnown(p, [
    "items",
    "cancel_at_period_end",
    "cancel_at",
    "cancellation_details",
    "discounts",
    "promotion_code",
    "coupon",
    "trial_end",
    "trial_settings",
    "proration_behavior",
    "proration_date",
    "payment_behavior",
    "metadata",
    "default_payment_method",
    "description",
    "expand",
    "off_session",
    "billing_cycle_anchor",
    "pause_collection",
    "collection_method",
    "days_until_due",
  ]);
  const sub = s.store.get("subscription", id);
  const before = deepCopy(sub);
  const onlyMeta = Object.keys(p).every((k) => ["metadata", "cancellation_details", "expand"].includes(k));
  if (!onlyMeta) notCanceled(sub);
  const proration =
    readString(p.proration_behavior, "proration_behavior", {
      oneOf: ["create_prorations", "none", "always_invoice"],
    }) ?? "create_prorations";
  let invoiceNow = false;
  let newPeriod = false;

  // Items: `items[i][id]` changes that item (price, quantity, deleted); without an id, a new item.
  if (p.items !== undefined) {
    const list = Array.isArray(p.items) ? p.items : [p.items];
    for (const [i, change] of list.entries()) {
      const at = (f) => `items[${i}][${f}]`;
      checkKnown(change, [
        "id",
        "price",
        "quantity",
        "deleted",
        "metadata",
        "clear_usage",
        "discounts",
        "tax_rates",
        "price_data",
        "billing_thresholds",
      ]);
      const quantity = readInteger(change.quantity, at("quantity"), { min: 1 });
      if (change.id) {
        const item = sub.items.data.find((it) => it.id === change.id);
        if (!item) throw StripeError.missingParam("subscription item", change.id, at("id"));
        if (readBoolean(change.deleted, at("deleted"))) {
          if (sub.items.data.length === 1) {
            throw StripeError.invalid("A subscription must have at least one active plan.", at("deleted"));
          }
          sub.items.data = sub.items.data.filter((it) => it !== item);
          continue;
        }
        if (change.price) {
          const price = recurringPrice(s, change.price, at("price"));
          if (price.currency !== sub.currency) {
            throw StripeError.invalid(
              "The price's currency must match the subscription's currency.",
              at("price"),
            );
          }
          if (price.recurring.interval !== item.price.recurring.interval) newPeriod = true;
          item.price = deepCopy(price);
          item.plan = planOf(price);
        }
        if (quantity !== undefined) item.quantity = quantity;
      } else {
        const priceId = readString(change.price, at("price"), { required: true });
        const price = recurringPrice(s, priceId, at("price"));
        if (sub.items.data.some((it) => it.price.id === price.id)) {
          throw StripeError.invalid(
            `Cannot add multiple subscription items with the same plan: ${price.id}`,
            at("price"),
          );
        }
        const period = periodOf(sub);
        sub.items.data.push(makeItem(s, sub.id, price, quantity ?? 1, period));
      }
    }
    sub.items.total_count = sub.items.data.length;
    if (JSON.stringify(before.items) !== JSON.stringify(sub.items) && proration === "always_invoice")
      invoiceNow = true;
  }

  const cancelAtPeriodEnd = readBoolean(p.cancel_at_period_end, "cancel_at_period_end");
  if (cancelAtPeriodEnd !== undefined) {
    sub.cancel_at_period_end = cancelAtPeriodEnd;
    sub.cancel_at = cancelAtPeriodEnd ? periodOf(sub).end : null;
    sub.canceled_at = cancelAtPeriodEnd ? s.now() : null;
    sub.cancellation_details.reason = cancelAtPeriodEnd ? "cancellation_requested" : null;
  }
  if (p.cancel_at !== undefined) {
    const at = p.cancel_at === "" ? null : readInteger(p.cancel_at, "cancel_at");
    sub.cancel_at = at;
    sub.cancel_at_period_end = at !== null && at === periodOf(sub).end;
  }
  if (p.cancellation_details) {
    sub.cancellation_details.comment = p.cancellation_details.comment ?? sub.cancellation_details.comment;
    sub.cancellation_details.feedback = p.cancellation_details.feedback ?? sub.cancellation_details.feedback;
  }
  sub.metadata = mergeMetadata(sub.metadata, p.metadata);
  if (p.description !== undefined) sub.description = p.description || null;
  if (p.default_payment_method !== undefined) {
    if (p.default_payment_method === "") sub.default_payment_method = null;
    else {
      const pm = s.store.get("payment_method", p.default_payment_method, { param: "default_payment_method" });
      if (pm.customer !== sub.customer) {
        throw StripeError.invalid(
          "The payment method must be attached to the customer.",
          "default_payment_method",
        );
      }
      sub.default_payment_method = pm.id;
    }
  }
  if (p.trial_settings?.end_behavior?.missing_payment_method) {
    sub.trial_settings.end_behavior.missing_payment_method = readString(
      p.trial_settings.end_behavior.missing_payment_method,
      "trial_settings[end_behavior][missing_payment_method]",
      { oneOf: ["cancel", "create_invoice", "pause"] },
    );
  }

  // Discounts: `discounts[0][promotion_code|coupon]`, `discounts=""` to remove them; the legacy
  // `promotion_code` and `coupon` parameters too.
  const order = {
    customer: sub.customer,
    amount: subtotalOf(sub),
    currency: sub.currency,
    products: sub.items.data.map((it) => it.price.product),
  };
  const applyPromo = (code, param) => {
    const promo = s.store.get("promotion_code", code, { param });
    checkRedeemable(s, promo, order, param);
    addDiscount(s, sub, { promo });
  };
  if (p.discounts === "") sub.discounts = [];
  else if (p.discounts !== undefined) {
    const list = Array.isArray(p.discounts) ? p.discounts : [p.discounts];
    if (list.length > 1)
      throw StripeError.invalid("The stand-in applies one discount per subscription.", "discounts");
    const d = list[0];
    if (d?.promotion_code) applyPromo(d.promotion_code, "discounts[0][promotion_code]");
    else if (d?.coupon) {
      const coupon = s.store.get("coupon", d.coupon, { param: "discounts[0][coupon]" });
      addDiscount(s, sub, { coupon });
    } else if (d?.discount) {
      if (!sub.discounts.includes(d.discount))
        throw StripeError.missingParam("discount", d.discount, "discounts[0][discount]");
    }
  }
  if (p.promotion_code) applyPromo(p.promotion_code, "promotion_code");
  if (p.coupon) addDiscount(s, sub, { coupon: s.store.get("coupon", p.coupon, { param: "coupon" }) });

  // trial_end: "now" ends the trial (and bills), a timestamp moves it.
  if (p.trial_end !== undefined) {
    if (p.trial_end === "now") {
      if (sub.status === "trialing") {
        const outcome = endTrialState(s, sub);
        s.emit("customer.subscription.updated", sub, previousAttributes(before, sub));
        if (outcome.invoice) emitInvoice(s, outcome.invoice);
        if (outcome.deleted) s.emit("customer.subscription.deleted", sub);
        return sub;
      }
    } else {
      const end = readInteger(p.trial_end, "trial_end");
      if (end <= s.now()) throw StripeError.invalid("Invalid timestamp: must be in the future", "trial_end");
      sub.trial_end = end;
      sub.trial_start ??= s.now();
      sub.status = "trialing";
      for (const item of sub.items.data) item.current_period_end = end;
    }
  }

  let invoice;
  if (sub.status !== "trialing" && (newPeriod || invoiceNow)) {
    // `error_if_incomplete`: a change whose invoice cannot be paid is refused (402) and not made.
    if (
      p.payment_behavior === "error_if_incomplete" &&
      !hasPaymentMethod(s, sub.customer) &&
      subtotalOf(sub) > 0
    ) {
      for (const key of Object.keys(sub)) delete sub[key];
      Object.assign(sub, before);
      throw new StripeError(402, "card_error", "Your card was declined.", {
        code: "card_declined",
        declineCode: "generic_decline",
      });
    }
    if (newPeriod) setPeriod(sub, s.now());
    const period = periodOf(sub);
    invoice = makeInvoice(s, sub, {
      reason: "subscription_update",
      periodStart: period.start,
      periodEnd: period.end,
    });
    if (invoice.status !== "paid") sub.status = "past_due";
  }
  // During a trial the period is the trial: a new interval starts when it ends.
  const previous = previousAttributes(before, sub);
  if (Object.keys(previous).length > 0) s.emit("customer.subscription.updated", sub, previous);
  if (invoice) emitInvoice(s, invoice);
  return sub;
}

/** Ends `sub` now (`DELETE /v1/subscriptions/:id`, the portal's "cancel now", the control API). */
export function cancelSubscription(s, id, p = {}) {
  checkKnown(p, ["invoice_now", "prorate", "cancellation_details", "expand"]);
  const sub = s.store.get("subscription", id);
  if (sub.status === "canceled") {
    throw StripeError.invalid("This subscription has already been canceled.", undefined);
  }
  const now = s.now();
  sub.status = "canceled";
  sub.canceled_at = now;
  sub.ended_at = now;
  sub.cancel_at_period_end = false;
  sub.cancellation_details = {
    comment: p.cancellation_details?.comment ?? null,
    feedback: p.cancellation_details?.feedback ?? null,
    reason: "cancellation_requested",
  };
  s.emit("customer.subscription.deleted", sub);
  return sub;
}
