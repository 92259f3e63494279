// Life-cycle moves that happen at Stripe with time or with the customer's bank — a trial's end and its
// warning, a renewal, a failed payment and its recovery, retries running out — for the control API
// (control.mjs), each emitting the events Stripe sends for it.
import { attachCard, hasPaymentMethod } from "./customers.mjs";
import { StripeError } from "./errors.mjs";
import { emitInvoice, makeInvoice } from "./invoices.mjs";
import { previousAttributes } from "./present.mjs";
import { deepCopy } from "./store.mjs";
import { DAY, notCanceled, periodOf, setPeriod } from "./subscription-state.mjs";

/** The state change of a trial's end; the caller emits. */
export function endTrialState(s, sub) {
  const now = s.now();
  sub.trial_end = now;
  setPeriod(sub, now);
  if (!hasPaymentMethod(s, sub.customer)) {
    const behavior = sub.trial_settings?.end_behavior?.missing_payment_method ?? "create_invoice";
    if (behavior === "cancel") {
      sub.status = "canceled";
      sub.canceled_at = now;
      sub.ended_at = now;
      sub.cancellation_details.reason = "payment_failed";
      return { deleted: true };
    }
    if (behavior === "pause") {
      sub.status = "paused";
      return {};
    }
  }
  const period = periodOf(sub);
  const invoice = makeInvoice(s, sub, {
    reason: "subscription_cycle",
    periodStart: period.start,
    periodEnd: period.end,
  });
  sub.status = invoice.status === "paid" ? "active" : "past_due";
  return { invoice };
}

function moveResult(sub, before) {
  return { subscription: sub, previous_attributes: previousAttributes(before, sub) };
}

/** The trial ends now: `active` + `invoice.paid`, or without a card `past_due` + `invoice.payment_failed`. */
export function endTrial(s, sub) {
  if (sub.status !== "trialing") throw StripeError.invalid("The subscription is not trialing.", "status");
  const before = deepCopy(sub);
  const outcome = endTrialState(s, sub);
  if (outcome.deleted) s.emit("customer.subscription.deleted", sub);
  else s.emit("customer.subscription.updated", sub, previousAttributes(before, sub));
  if (outcome.invoice) emitInvoice(s, outcome.invoice);
  return moveResult(sub, before);
}

/** `customer.subscription.trial_will_end`, which Stripe sends three days before a trial ends. */
export function trialWillEnd(s, sub) {
  if (sub.status !== "trialing") throw StripeError.invalid("The subscription is not trialing.", "status");
  s.emit("customer.subscription.trial_will_end", sub);
  return moveResult(sub, sub);
}

/**
 * The period ends now: a subscription set to cancel ends (`deleted`), a trial ends, any other renews
 * with a new invoice (paid with a card, else failed).
 */
export function renew(s, sub) {
  notCanceled(sub);
  if (sub.status === "trialing") return endTrial(s, sub);
  const before = deepCopy(sub);
  if (sub.cancel_at_period_end || (sub.cancel_at !== null && sub.cancel_at <= periodOf(sub).end)) {
    sub.status = "canceled";
    sub.ended_at = s.now();
    sub.canceled_at ??= s.now();
    s.emit("customer.subscription.deleted", sub);
    return moveResult(sub, before);
  }
  setPeriod(sub, s.now());
  const period = periodOf(sub);
  const invoice = makeInvoice(s, sub, {
    reason: "subscription_cycle",
    periodStart: period.start,
    periodEnd: period.end,
  });
  sub.status = invoice.status === "paid" ? "active" : "past_due";
  s.emit("customer.subscription.updated", sub, previousAttributes(before, sub));
  emitInvoice(s, invoice);
  return moveResult(sub, before);
}

/**
 * The next payment fails: an active subscription renews with an open invoice and goes `past_due`
 * (`customer.subscription.updated`, `invoice.payment_failed`); a past-due one fails its open invoice
 * again (`invoice.payment_failed`, one more attempt).
 */
export function failPayment(s, sub) {
  notCanceled(sub);
  const before = deepCopy(sub);
  const latest = sub.latest_invoice ? s.store.find("invoice", sub.latest_invoice) : undefined;
  if (latest && latest.status === "open") {
    latest.attempt_count += 1;
    latest.next_payment_attempt = s.now() + 3 * DAY;
    if (sub.status !== "past_due" && sub.status !== "unpaid") sub.status = "past_due";
    const previous = previousAttributes(before, sub);
    if (Object.keys(previous).length > 0) s.emit("customer.subscription.updated", sub, previous);
    s.emit("invoice.payment_failed", latest);
    return moveResult(sub, before);
  }
  if (sub.status === "trialing") sub.trial_end = s.now();
  setPeriod(sub, s.now());
  const period = periodOf(sub);
  const invoice = makeInvoice(s, sub, {
    reason: "subscription_cycle",
    periodStart: period.start,
    periodEnd: period.end,
  });
  if (invoice.status === "paid") {
    // Force the failure even with a card on file: the card was declined.
    invoice.status = "open";
    invoice.amount_remaining = invoice.amount_paid;
    invoice.amount_paid = 0;
    invoice.status_transitions.paid_at = null;
    invoice.next_payment_attempt = s.now() + 3 * DAY;
    invoice.attempt_count = 1;
    invoice.attempted = true;
  }
  sub.status = "past_due";
  s.emit("customer.subscription.updated", sub, previousAttributes(before, sub));
  s.emit("invoice.payment_failed", invoice);
  return moveResult(sub, before);
}

/** The open invoice is paid (a card was added and the retry succeeded): `active` + `invoice.paid`. */
export function recover(s, sub) {
  notCanceled(sub);
  const latest = sub.latest_invoice ? s.store.find("invoice", sub.latest_invoice) : undefined;
  if (latest?.status !== "open") {
    throw StripeError.invalid("The subscription has no open invoice.", "latest_invoice");
  }
  const before = deepCopy(sub);
  const customer = s.store.get("customer", sub.customer);
  if (!hasPaymentMethod(s, customer.id)) attachCard(s, customer);
  latest.status = "paid";
  latest.amount_paid = latest.amount_due;
  latest.amount_remaining = 0;
  latest.attempt_count += 1;
  latest.next_payment_attempt = null;
  latest.status_transitions.paid_at = s.now();
  sub.status = "active";
  s.emit("customer.subscription.updated", sub, previousAttributes(before, sub));
  s.emit("invoice.paid", latest);
  return moveResult(sub, before);
}

/** Retries are exhausted: `unpaid` (`customer.subscription.updated`). */
export function markUnpaid(s, sub) {
  notCanceled(sub);
  const before = deepCopy(sub);
  sub.status = "unpaid";
  s.emit("customer.subscription.updated", sub, previousAttributes(before, sub));
  return moveResult(sub, before);
}
