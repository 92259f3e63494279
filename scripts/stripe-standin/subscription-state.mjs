// A subscription's periods and amounts: calendar arithmetic for billing periods (all items share one
// period), the plan object Stripe still mirrors on each item, and the guard for ended subscriptions.
import { StripeError } from "./errors.mjs";

export const DAY = 86_400;

/** `ts` moved by `count` calendar `interval`s (month ends clamp, as Stripe's billing anchors do). */
export function addInterval(ts, interval, count = 1) {
  if (interval === "day") return ts + count * DAY;
  if (interval === "week") return ts + count * 7 * DAY;
  const d = new Date(ts * 1000);
  const months = interval === "year" ? 12 * count : count;
  const day = d.getUTCDate();
  const target = new Date(
    Date.UTC(
      d.getUTCFullYear(),
      d.getUTCMonth() + months,
      1,
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
    ),
  );
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return Math.floor(target.getTime() / 1000);
}

export function planOf(price) {
  return {
    id: price.id,
    object: "plan",
    active: price.active,
    amount: price.unit_amount,
    amount_decimal: String(price.unit_amount),
    billing_scheme: "per_unit",
    created: price.created,
    currency: price.currency,
    interval: price.recurring.interval,
    interval_count: price.recurring.interval_count,
    livemode: false,
    metadata: price.metadata,
    meter: null,
    nickname: price.nickname,
    product: price.product,
    tiers_mode: null,
    transform_usage: null,
    trial_period_days: null,
    usage_type: "licensed",
  };
}

/** The period of `sub` (all items share it). */
export function periodOf(sub) {
  const item = sub.items.data[0];
  return { start: item.current_period_start, end: item.current_period_end };
}

export function setPeriod(sub, start) {
  for (const item of sub.items.data) {
    item.current_period_start = start;
    item.current_period_end = addInterval(
      start,
      item.price.recurring.interval,
      item.price.recurring.interval_count,
    );
  }
  sub.billing_cycle_anchor = start;
}

/** Amount of one period before discounts. */
export function subtotalOf(sub) {
  return sub.items.data.reduce((sum, item) => sum + item.price.unit_amount * (item.quantity ?? 1), 0);
}

/** A canceled subscription only takes metadata and cancellation_details. */
export function notCanceled(sub) {
  if (sub.status === "canceled" || sub.status === "incomplete_expired") {
    throw StripeError.invalid(
      "A canceled subscription can only update its cancellation_details and metadata.",
      undefined,
    );
  }
}
