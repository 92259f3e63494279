import type { z } from "@hono/zod-openapi";
import type Stripe from "stripe";
import type { BillingDiscount } from "../../db/schema";
import type { BillingAccount, InstitutionBilling } from "./account";
import type { DiscountSchema, SubscriptionSchema, TrialStatusSchema } from "./schemas";

type Discount = z.infer<typeof DiscountSchema>;

/** A coupon's discount as the API shows it (not yet applied: no end). */
export function presentCouponDiscount(coupon: Stripe.Coupon, code: string | null): Discount {
  const amount = coupon.amount_off !== null;
  return {
    code,
    percent_off: amount ? null : coupon.percent_off,
    amount_off: amount ? coupon.amount_off : null,
    currency: amount ? coupon.currency : null,
    duration: coupon.duration as Discount["duration"],
    duration_in_months: coupon.duration === "repeating" ? coupon.duration_in_months : null,
    ends_at: null,
  };
}

export function presentDiscount(discount: BillingDiscount | null): Discount | null {
  if (!discount) return null;
  return {
    code: discount.code,
    percent_off: discount.percent_off,
    amount_off: discount.amount_off,
    currency: discount.currency,
    duration: discount.duration,
    duration_in_months: discount.duration_in_months,
    ends_at: discount.ends_at,
  };
}

export function presentSubscription(
  institution: InstitutionBilling,
  account: BillingAccount | null,
): z.infer<typeof SubscriptionSchema> {
  const subscribed = Boolean(account?.subscriptionId && account.subscriptionStatus);
  return {
    status: subscribed && account?.subscriptionStatus ? account.subscriptionStatus : "none",
    plan: institution.plan,
    interval: subscribed ? (account?.interval ?? null) : null,
    seats: subscribed ? (account?.quantity ?? null) : null,
    current_period_start: subscribed ? (account?.currentPeriodStart ?? null) : null,
    current_period_end: subscribed ? (account?.currentPeriodEnd ?? null) : null,
    cancel_at_period_end: subscribed ? Boolean(account?.cancelAtPeriodEnd) : false,
    canceled_at: subscribed ? (account?.canceledAt ?? null) : null,
    trial_start: subscribed ? (account?.trialStart ?? null) : null,
    trial_end: subscribed ? (account?.trialEnd ?? null) : null,
    discount: subscribed ? presentDiscount(account?.discount ?? null) : null,
    latest_invoice_status: subscribed ? (account?.latestInvoiceStatus ?? null) : null,
    payment_method_on_file: Boolean(account?.paymentMethodOnFile),
    pending_promo_code: account?.pendingPromoCode ?? null,
    synced_at: account?.syncedAt ?? null,
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function presentTrialStatus(
  institution: InstitutionBilling,
  account: BillingAccount | null,
  now: number,
): z.infer<typeof TrialStatusSchema> {
  const trialEnd = account?.trialEnd ? Date.parse(account.trialEnd) : null;
  const onTrial = account?.subscriptionStatus === "trialing" && trialEnd !== null && trialEnd > now;
  const paymentMethod = Boolean(account?.paymentMethodOnFile);
  return {
    plan: institution.plan,
    on_trial: onTrial,
    trial_started_at: account?.trialStart ?? null,
    trial_ends_at: account?.trialEnd ?? null,
    days_remaining: onTrial && trialEnd !== null ? Math.ceil((trialEnd - now) / DAY_MS) : null,
    payment_method_on_file: paymentMethod,
    at_trial_end: onTrial
      ? paymentMethod && !account?.cancelAtPeriodEnd
        ? "subscription_starts"
        : "downgrade_to_free"
      : null,
  };
}
