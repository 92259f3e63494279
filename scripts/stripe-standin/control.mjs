// The control API for tests and development, under `/_standin/` (JSON in and out, loopback only, no
// key). Nothing in it resets the stand-in: tests run in parallel, each on its own customers.
//   GET  /_standin/health
//   GET  /_standin/deliveries?customer=cus_…&since=<index>&type=<event type>&object=<id>
//        → { data: [{ index, event_id, type, customer, object_id, created, payload, signature,
//            status, attempts }], next_index }  (`since=next_index` reads only what came after)
//   POST /_standin/subscriptions/<sub_…>/<move>  → { subscription, deliveries }, <move> one of
//        end_trial       trialing → active + invoice.paid, or without a card past_due +
//                        invoice.payment_failed (or per trial_settings: canceled / paused)
//        trial_will_end  customer.subscription.trial_will_end (Stripe: 3 days before the trial ends)
//        renew           the period ends: renews with an invoice, or ends a subscription set to cancel
//        fail_payment    the next payment fails: past_due + invoice.payment_failed (again when past due)
//        recover         the open invoice is paid: active + invoice.paid (adds a card if none)
//        mark_unpaid     retries exhausted: unpaid
//        cancel          ends it now: canceled + customer.subscription.deleted
//   POST   /_standin/customers/<cus_…>/payment_method  attaches a test card (its default)
//   DELETE /_standin/customers/<cus_…>/payment_method  removes the customer's cards
//   POST /_standin/sign  { payload, timestamp? } → { signature }: a `Stripe-Signature` for a payload
//        at another time (stale-signature tests; a worker clock moved by the tests)
//   POST /_standin/promotion_codes  { code?, percent_off | amount_off + currency, duration?,
//        duration_in_months?, max_redemptions?, times_redeemed?, expires_at?, redeem_by?, active?,
//        first_time_transaction?, minimum_amount?, minimum_amount_currency?, applies_to_products?,
//        customer? } → { promotion_code, coupon }: a fresh coupon and code (unique unless given), with
//        states the API cannot create (already expired, already redeemed) for tests.
import { attachCard, detachCards } from "./customers.mjs";
import { StripeError } from "./errors.mjs";
import { signPayload } from "./events.mjs";
import { endTrial, failPayment, markUnpaid, recover, renew, trialWillEnd } from "./lifecycle.mjs";
import { present } from "./present.mjs";
import { createCoupon, createPromotionCode, refreshCoupon } from "./promotions.mjs";
import { newId } from "./store.mjs";
import { cancelSubscription } from "./subscriptions.mjs";

const MOVES = {
  end_trial: endTrial,
  trial_will_end: trialWillEnd,
  renew,
  fail_payment: failPayment,
  recover,
  mark_unpaid: markUnpaid,
  cancel: (s, sub) => ({ subscription: cancelSubscription(s, sub.id) }),
};

const str = (v) => (v === undefined || v === null ? undefined : String(v));

/** Answers `{ status, body }` for a control request, or undefined for an unknown path. */
export function control(s, method, parts, query, body) {
  const [kind, id, action] = parts;
  if (method === "GET" && kind === "health" && !id) {
    return { status: 200, body: { ok: true, url: s.baseUrl(), deliveries: s.events.deliveries.length } };
  }
  if (method === "GET" && kind === "deliveries" && !id) {
    const since = Number(query.get("since") ?? 0);
    const data = s.events.list({
      customer: query.get("customer") ?? undefined,
      type: query.get("type") ?? undefined,
      object: query.get("object") ?? undefined,
      since: Number.isFinite(since) ? since : 0,
    });
    return { status: 200, body: { data, next_index: s.events.deliveries.length } };
  }
  if (method === "POST" && kind === "sign" && !id) {
    if (typeof body?.payload !== "string")
      throw StripeError.invalid("payload (a string) is required.", "payload");
    const timestamp = body.timestamp === undefined ? s.now() : Number(body.timestamp);
    return { status: 200, body: { signature: signPayload(body.payload, s.events.webhookSecret, timestamp) } };
  }
  if (method === "POST" && kind === "subscriptions" && id && action) {
    const move = MOVES[action];
    if (!move)
      throw StripeError.invalid(`Unknown move ${action}; one of ${Object.keys(MOVES).join(", ")}.`, "move");
    const sub = s.store.get("subscription", id);
    const from = s.events.deliveries.length;
    move(s, sub);
    return {
      status: 200,
      body: { subscription: present(s.store, sub), deliveries: s.events.deliveries.slice(from) },
    };
  }
  if (kind === "customers" && id && action === "payment_method") {
    const customer = s.store.get("customer", id);
    if (method === "POST") {
      const method_ = attachCard(s, customer);
      for (const sub of s.store.all("subscription")) {
        if (sub.customer === customer.id && sub.status !== "canceled")
          sub.default_payment_method = method_.id;
      }
      return { status: 200, body: { payment_method: method_, customer } };
    }
    if (method === "DELETE") {
      detachCards(s, customer);
      return { status: 200, body: { customer } };
    }
  }
  if (method === "POST" && kind === "promotion_codes" && !id) {
    const b = body ?? {};
    const coupon = createCoupon(
      s,
      {
        percent_off: str(b.percent_off ?? (b.amount_off === undefined ? 10 : undefined)),
        amount_off: str(b.amount_off),
        currency: str(b.currency),
        duration: str(b.duration),
        duration_in_months: str(b.duration_in_months),
        redeem_by: str(b.redeem_by),
        name: str(b.name),
        applies_to: b.applies_to_products ? { products: b.applies_to_products } : undefined,
      },
      { seed: true },
    );
    const restrictions = {};
    if (b.first_time_transaction !== undefined)
      restrictions.first_time_transaction = str(b.first_time_transaction);
    if (b.minimum_amount !== undefined) {
      restrictions.minimum_amount = str(b.minimum_amount);
      restrictions.minimum_amount_currency = str(b.minimum_amount_currency ?? "eur");
    }
    const promo = createPromotionCode(
      s,
      {
        promotion: { type: "coupon", coupon: coupon.id },
        code: str(b.code) ?? newId("TEST", 10).toUpperCase(),
        active: str(b.active),
        customer: str(b.customer),
        expires_at: str(b.expires_at),
        max_redemptions: str(b.max_redemptions),
        restrictions,
      },
      { seed: true },
    );
    if (b.times_redeemed !== undefined) {
      promo.times_redeemed = Number(b.times_redeemed);
      coupon.times_redeemed = Number(b.times_redeemed);
      refreshCoupon(s, coupon);
    }
    return { status: 200, body: { promotion_code: promo, coupon } };
  }
  return undefined;
}
