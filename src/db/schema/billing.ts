import { sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { institutions } from "./identity";

/** Stripe's subscription statuses, as Stripe names them. */
export const SUBSCRIPTION_STATUSES = [
  "incomplete",
  "incomplete_expired",
  "trialing",
  "active",
  "past_due",
  "canceled",
  "unpaid",
  "paused",
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const BILLING_INTERVALS = ["month", "year"] as const;
export type BillingInterval = (typeof BILLING_INTERVALS)[number];

/** A discount as the API shows it: a percentage, or an amount in minor units of a currency. */
export interface BillingDiscount {
  code: string | null;
  percent_off: number | null;
  amount_off: number | null;
  currency: string | null;
  duration: "once" | "repeating" | "forever";
  duration_in_months: number | null;
  ends_at: string | null;
}

/**
 * An institution's account with Stripe: its one customer (created once) and the last state of its
 * subscription that Stripe told us (re-read from Stripe on every event, never taken from an
 * event's own copy). The plan and seats this state implies live on `institutions`, where the token
 * gate and the seat guard read them.
 */
export const billingAccounts = sqliteTable("billing_accounts", {
  institutionId: text("institution_id")
    .primaryKey()
    .references(() => institutions.id),
  stripeCustomerId: text("stripe_customer_id").notNull().unique(),
  /** Set once any subscription existed (a trial included): no second trial. */
  everSubscribed: integer("ever_subscribed", { mode: "boolean" }).notNull().default(false),
  subscriptionId: text("subscription_id"),
  subscriptionStatus: text("subscription_status", { enum: SUBSCRIPTION_STATUSES }),
  priceId: text("price_id"),
  interval: text("interval", { enum: BILLING_INTERVALS }),
  /** The subscription's quantity: the seats paid for. */
  quantity: integer("quantity"),
  currentPeriodStart: text("current_period_start"),
  currentPeriodEnd: text("current_period_end"),
  cancelAtPeriodEnd: integer("cancel_at_period_end", { mode: "boolean" }).notNull().default(false),
  canceledAt: text("canceled_at"),
  trialStart: text("trial_start"),
  trialEnd: text("trial_end"),
  discount: text("discount", { mode: "json" }).$type<BillingDiscount | null>(),
  latestInvoiceStatus: text("latest_invoice_status"),
  paymentMethodOnFile: integer("payment_method_on_file", { mode: "boolean" }).notNull().default(false),
  /** A promotion code checked by apply-promo without a subscription: applied to the next checkout. */
  pendingPromotionCodeId: text("pending_promotion_code_id"),
  pendingPromoCode: text("pending_promo_code"),
  /**
   * When the subscription state above was read from Stripe (ISO 8601, milliseconds): an older read
   * never overwrites a newer one, whatever order events and reconciliations finish in.
   */
  syncedAt: text("synced_at"),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`),
  updatedAt: text("updated_at"),
});

/** Every Stripe event received, once: a repeated delivery of the same id does nothing. */
export const stripeEvents = sqliteTable("stripe_events", {
  id: text("id").primaryKey(),
  type: text("type").notNull(),
  institutionId: text("institution_id"),
  receivedAt: text("received_at").notNull(),
  /**
   * When a delivery last took the event in hand (ISO 8601, milliseconds): while it is recent, a
   * concurrent delivery of the same event waits (409) rather than applying it twice; once it is old,
   * the handling is taken to have died and the next delivery handles the event again.
   */
  claimedAt: text("claimed_at"),
  /** Null until handled: an event whose handling failed is handled again when Stripe retries it. */
  processedAt: text("processed_at"),
});
