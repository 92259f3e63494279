import type Stripe from "stripe";
import type { BillingDiscount, BillingInterval, SubscriptionStatus } from "../../db/schema/billing";
import type { ServiceContext } from "../../platform/service/context";
import type { PlanId } from "./plans";
import { planForPrice } from "./plans";
import { stripeFor } from "./stripe-client";

/**
 * A subscription as Stripe answers it, reduced to what Lingua keeps (the billing account's
 * subscription columns), and what it means for the institution: the plan and the seats.
 */
export interface SubscriptionState {
  subscriptionId: string;
  customerId: string;
  status: SubscriptionStatus;
  priceId: string | null;
  interval: BillingInterval | null;
  quantity: number | null;
  currentPeriodStart: string | null;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  canceledAt: string | null;
  trialStart: string | null;
  trialEnd: string | null;
  discount: BillingDiscount | null;
  latestInvoiceStatus: string | null;
  paymentMethodOnFile: boolean;
}

/**
 * Statuses that keep the paid plan: a trial, a paid subscription, and `past_due` — the grace while
 * Stripe retries a failed payment. Every other status is Free: `canceled` (Stripe deletes a
 * subscription cancelled at period end when the period ends, so it stays paid until then), `unpaid`
 * (Stripe gave up retrying), `incomplete` (the first payment never went through), `incomplete_expired`
 * and `paused` (a trial that ended without a payment method).
 */
export const PAID_STATUSES: readonly SubscriptionStatus[] = ["trialing", "active", "past_due"];

/** Statuses after which the subscription is over for good: a new one may replace it. */
const ENDED_STATUSES: readonly SubscriptionStatus[] = ["canceled", "incomplete_expired"];

/** The subscription's related objects the sync reads with it, in one request. */
export const SUBSCRIPTION_EXPAND = [
  "latest_invoice",
  "discounts.source.coupon",
  "discounts.promotion_code",
  "default_payment_method",
  "customer",
];

/** Re-reads a subscription from Stripe (never the event's copy), with what the sync needs expanded. */
export async function retrieveSubscription(ctx: ServiceContext, id: string): Promise<Stripe.Subscription> {
  return (await stripeFor(ctx)).subscriptions.retrieve(id, { expand: SUBSCRIPTION_EXPAND });
}

/** The id of an expandable Stripe reference. */
export function idOf(value: string | { id: string } | null | undefined): string | null {
  if (!value) return null;
  return typeof value === "string" ? value : value.id;
}

function isoOf(seconds: number | null | undefined): string | null {
  return typeof seconds === "number" ? new Date(seconds * 1000).toISOString().replace(".000Z", "Z") : null;
}

function discountOf(subscription: Stripe.Subscription): BillingDiscount | null {
  const first = subscription.discounts?.[0];
  if (!first || typeof first === "string") return null;
  const coupon = first.source?.coupon;
  if (!coupon || typeof coupon === "string") return null;
  const promotion = first.promotion_code;
  return {
    code: promotion && typeof promotion !== "string" ? promotion.code : null,
    percent_off: coupon.percent_off ?? null,
    amount_off: coupon.amount_off ?? null,
    currency: coupon.currency ?? null,
    duration: coupon.duration as BillingDiscount["duration"],
    duration_in_months: coupon.duration_in_months ?? null,
    ends_at: isoOf(first.end),
  };
}

function paymentMethodOnFile(subscription: Stripe.Subscription): boolean {
  if (subscription.default_payment_method || subscription.default_source) return true;
  const customer = subscription.customer;
  if (customer && typeof customer !== "string" && !("deleted" in customer && customer.deleted)) {
    const settings = (customer as Stripe.Customer).invoice_settings;
    return Boolean(settings?.default_payment_method || (customer as Stripe.Customer).default_source);
  }
  return false;
}

/** What Lingua keeps of a subscription Stripe answered. */
export function subscriptionState(subscription: Stripe.Subscription): SubscriptionState {
  const item = subscription.items.data[0];
  const recurring: string | undefined = item?.price?.recurring?.interval;
  // Periods live on the items since API version 2025-03-31; older answers carried them on the subscription.
  const legacy = subscription as unknown as { current_period_start?: number; current_period_end?: number };
  const invoice = subscription.latest_invoice;
  return {
    subscriptionId: subscription.id,
    customerId: idOf(subscription.customer) ?? "",
    status: subscription.status as SubscriptionStatus,
    priceId: item?.price?.id ?? null,
    interval: recurring === "month" || recurring === "year" ? (recurring as BillingInterval) : null,
    quantity: item ? (item.quantity ?? 1) : null,
    currentPeriodStart: isoOf(item?.current_period_start ?? legacy.current_period_start),
    currentPeriodEnd: isoOf(item?.current_period_end ?? legacy.current_period_end),
    cancelAtPeriodEnd:
      subscription.cancel_at_period_end ||
      (subscription.cancel_at !== null && subscription.status !== "canceled"),
    canceledAt: isoOf(subscription.canceled_at),
    trialStart: isoOf(subscription.trial_start),
    trialEnd: isoOf(subscription.trial_end),
    discount: discountOf(subscription),
    latestInvoiceStatus: invoice && typeof invoice !== "string" ? (invoice.status ?? null) : null,
    paymentMethodOnFile: paymentMethodOnFile(subscription),
  };
}

/**
 * The plan and seats a subscription state gives its institution: the price's plan with the
 * subscription's quantity as seats while the status keeps the paid plan, else Free without a seat
 * cap (Free sets none: docs/billing.md). Null when the price is one this deployment does not sell:
 * the institution is then left as it is (and the sync says so in the log).
 */
export function entitlementOf(
  ctx: ServiceContext,
  state: SubscriptionState,
): { plan: PlanId; seats: number | null } | null {
  if (!PAID_STATUSES.includes(state.status)) return { plan: "free", seats: null };
  const bought = planForPrice(ctx, state.priceId);
  return bought ? { plan: bought.plan, seats: state.quantity } : null;
}

/** Whether a subscription is over for good. */
export function hasEnded(status: SubscriptionStatus | null): boolean {
  return status === null || ENDED_STATUSES.includes(status);
}

/**
 * Whether `state` is the subscription the account follows: the one it follows already, or a new
 * one when the account has none; a live subscription replaces an ended one, and an ended one
 * never replaces another. A second live subscription of the same customer
 * (checkout refuses to start one) does not replace the first.
 */
export function governs(
  account: { subscriptionId: string | null; subscriptionStatus: SubscriptionStatus | null },
  state: SubscriptionState,
): boolean {
  if (account.subscriptionId === null || account.subscriptionId === state.subscriptionId) return true;
  return hasEnded(account.subscriptionStatus) && !hasEnded(state.status);
}
