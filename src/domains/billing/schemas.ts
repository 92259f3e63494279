import { z } from "@hono/zod-openapi";
import { BILLING_INTERVALS, PLANS, SUBSCRIPTION_STATUSES } from "../../db/schema";
import { pageSchema } from "../../platform/http/pagination";
import { ProblemSchema } from "../../platform/openapi-problems";

const timestamp = (description: string) =>
  z.string().nullable().openapi({ example: "2026-11-21T09:30:00Z", description });

export const PlanIdSchema = z.enum(PLANS).openapi({ description: "`free`, `pro` or `enterprise`." });
export const IntervalSchema = z
  .enum(BILLING_INTERVALS)
  .openapi({ description: "Billed each `month` or `year`." });

export const PlanPriceSchema = z
  .object({
    id: z.string().openapi({ description: "The Stripe price id.", example: "price_1Q0PsIJvEtkwdCNY" }),
    interval: IntervalSchema,
    currency: z.string().openapi({ description: "ISO 4217 code, lower case.", example: "eur" }),
    unit_amount: z.number().int().openapi({
      description: "Integer amount in the currency's minor unit (cents), per seat when `per_seat`.",
      example: 900,
    }),
    per_seat: z
      .boolean()
      .openapi({ description: "The amount is per seat: the subscription's quantity is its seats." }),
  })
  .openapi("PlanPrice");

export const SubscriptionPlanSchema = z
  .object({
    id: PlanIdSchema,
    name: z.string().openapi({ example: "Pro" }),
    description: z.string(),
    rate_limit_per_minute: z.number().int().openapi({
      description:
        "Requests per rolling minute per token (Enterprise: the default; a contract sets its own). The institution-wide budget is a multiple of it (docs/authentication.md).",
      example: 1000,
    }),
    seats_included: z.number().int().nullable().openapi({
      description:
        "Seats the plan gives without buying any; `null`: the plan sets no seat cap (Free keeps the institution's own seat setting; Enterprise is by contract). Pro is bought per seat, at least this many.",
    }),
    features: z.array(z.string()).openapi({ example: ["webhooks", "lti", "sso"] }),
    trial_days: z.number().int().openapi({
      description: "Days of free trial a first subscription of the plan starts with; 0: none.",
      example: 14,
    }),
    contact_sales: z.boolean().openapi({ description: "Sold through sales, not checkout: no prices." }),
    prices: z.array(PlanPriceSchema).openapi({
      description:
        "Read from Stripe (kept a few minutes). Empty for Free and Enterprise, and for every plan on a deployment without billing configured.",
    }),
    current: z.boolean().openapi({ description: "The caller's institution is on this plan." }),
  })
  .openapi("SubscriptionPlan");

export const SubscriptionPlanPageSchema = pageSchema(SubscriptionPlanSchema, "SubscriptionPlanPage");

const RedirectUrl = (description: string) => z.string().min(1).max(2048).openapi({ description });

export const MAX_SEATS = 10_000;

export const CreateCheckoutSessionBody = z
  .strictObject({
    plan: PlanIdSchema.openapi({
      description: "The plan to subscribe to: `pro` (Enterprise is `422 contact_sales`).",
    }),
    interval: IntervalSchema.default("month"),
    seats: z
      .number()
      .int()
      .min(1, "must be >= 1")
      .max(MAX_SEATS, `must be <= ${MAX_SEATS}`)
      .optional()
      .openapi({
        description:
          "Seats to buy (the subscription's quantity): at least the institution's invited and active members. Default: that number, at least 1.",
        example: 25,
      }),
    success_url: RedirectUrl(
      "Where Stripe sends the customer after paying: https on an allowed origin; may contain `{CHECKOUT_SESSION_ID}`, which Stripe replaces with the session's id.",
    ).openapi({ example: "https://app.example.com/billing/done?session={CHECKOUT_SESSION_ID}" }),
    cancel_url: RedirectUrl(
      "Where Stripe sends the customer who goes back: https on an allowed origin.",
    ).openapi({
      example: "https://app.example.com/billing",
    }),
    promo_code: z.string().trim().min(1).max(200).optional().openapi({
      description:
        "A promotion code to apply (checked as `POST /api/billing/apply-promo` checks it). Without one, a code kept by apply-promo is applied, or the customer may enter one on Stripe's page.",
      example: "WELCOME20",
    }),
  })
  .openapi("CreateCheckoutSessionRequest");

export const CheckoutSessionSchema = z
  .object({
    id: z.string().openapi({ description: "The Stripe Checkout Session id.", example: "cs_test_a1b2c3" }),
    url: z
      .url()
      .openapi({ description: "Stripe's hosted checkout page: send the customer's browser there." }),
    expires_at: timestamp("When the session expires unless completed (Stripe: 24 hours)."),
  })
  .openapi("CheckoutSession");

export const CreatePortalSessionBody = z
  .strictObject({
    return_url: RedirectUrl("Where the portal's back link goes: https on an allowed origin.").openapi({
      example: "https://app.example.com/billing",
    }),
  })
  .openapi("CreatePortalSessionRequest");

export const PortalSessionSchema = z
  .object({
    url: z.url().openapi({
      description:
        "Stripe's billing portal for the institution: send the browser there at once. Never stored by Lingua.",
    }),
    expires_at: z.string().openapi({
      description:
        "Until when the URL is good to open: five minutes after it was created (Stripe does not say, and expires unused portal links after a short while). Create a new one each time a user asks.",
      example: "2026-11-21T09:35:00Z",
    }),
  })
  .openapi("PortalSession");

export const DiscountSchema = z
  .object({
    code: z
      .string()
      .nullable()
      .openapi({ description: "The promotion code, when the discount came from one.", example: "WELCOME20" }),
    percent_off: z
      .number()
      .nullable()
      .openapi({ description: "Percentage off; null for an amount off.", example: 20 }),
    amount_off: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Minor units off; null for a percentage." }),
    currency: z
      .string()
      .nullable()
      .openapi({ description: "ISO 4217 currency of `amount_off`; null for a percentage." }),
    duration: z.enum(["once", "repeating", "forever"]),
    duration_in_months: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Months a `repeating` discount lasts.", example: 3 }),
    ends_at: timestamp(
      "When the discount ends, once it is applied to a subscription; null otherwise or when it does not end.",
    ),
  })
  .openapi("Discount");

export const ApplyPromoBody = z
  .strictObject({
    code: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .openapi({ description: "The promotion code, as the customer typed it.", example: "WELCOME20" }),
  })
  .openapi("ApplyPromoRequest");

export const APPLIED_TO = ["subscription", "next_checkout"] as const;

export const AppliedPromoSchema = z
  .object({
    code: z.string().openapi({ description: "The code as Stripe spells it.", example: "WELCOME20" }),
    applied_to: z.enum(APPLIED_TO).openapi({
      description:
        "`subscription`: applied to the running subscription (the subscription's `discount` shows it once Stripe confirms it); `next_checkout`: kept for the institution's next checkout.",
    }),
    discount: DiscountSchema,
  })
  .openapi("AppliedPromo");

export const PROMO_REFUSALS = ["not_found", "expired", "inactive", "exhausted", "not_applicable"] as const;
export type PromoRefusal = (typeof PROMO_REFUSALS)[number];

export const PromoInvalidProblemSchema = ProblemSchema.extend({
  reason: z.enum(PROMO_REFUSALS).openapi({
    description:
      "Why the code cannot be used: `not_found`, `expired`, `inactive`, `exhausted` (no redemptions left), `not_applicable` (first-time customers only, a minimum amount, other products, another currency).",
  }),
}).openapi("PromoCodeInvalidProblem", {
  description: "`promo_code_invalid`, with the reason as data (other 422s are the usual Problem).",
});

export const TrialStatusSchema = z
  .object({
    plan: PlanIdSchema.openapi({
      description: "The plan in force (it sets the rate limits): `pro` during a trial.",
    }),
    on_trial: z.boolean(),
    trial_started_at: timestamp("When the institution's trial started; null if it never had one."),
    trial_ends_at: timestamp("When the trial ends (or ended); null if it never had one."),
    days_remaining: z.number().int().nullable().openapi({
      description:
        "Whole days left of the trial, rounded up (a trial ending in 2 hours has 1 day left); null when not on trial.",
      example: 14,
    }),
    payment_method_on_file: z.boolean(),
    at_trial_end: z.enum(["subscription_starts", "downgrade_to_free"]).nullable().openapi({
      description:
        "What happens when the trial ends: the paid subscription starts (a payment method is on file and the subscription is not set to cancel), or the institution goes back to Free. Null when not on trial.",
    }),
  })
  .openapi("TrialStatus");

export const SubscriptionSchema = z
  .object({
    status: z.enum(["none", ...SUBSCRIPTION_STATUSES]).openapi({
      description:
        "Stripe's status of the subscription (`trialing`, `active`, `past_due`, `unpaid`, `canceled`, `incomplete`, `incomplete_expired`, `paused`), or `none` when the institution never subscribed.",
    }),
    plan: PlanIdSchema.openapi({ description: "The plan in force, which sets the rate limits." }),
    interval: IntervalSchema.nullable(),
    seats: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Seats paid for (the subscription's quantity)." }),
    current_period_start: timestamp("Start of the current billing period."),
    current_period_end: timestamp(
      "End of the current billing period: the next invoice, or the end of a cancelled subscription.",
    ),
    cancel_at_period_end: z.boolean(),
    canceled_at: timestamp("When it was cancelled, if it was."),
    trial_start: timestamp("Start of its trial, if it had one."),
    trial_end: timestamp("End of its trial, if it had one."),
    discount: z
      .union([DiscountSchema, z.null()])
      .openapi({ description: "The discount applied to the subscription; null when none." }),
    latest_invoice_status: z.string().nullable().openapi({
      description:
        "Stripe's status of the latest invoice: `draft`, `open`, `paid`, `uncollectible` or `void`.",
      example: "paid",
    }),
    payment_method_on_file: z.boolean(),
    pending_promo_code: z.string().nullable().openapi({
      description:
        "A promotion code kept by apply-promo for the next checkout; null while a subscription is live.",
    }),
    synced_at: timestamp("When this state was last read from Stripe."),
  })
  .openapi("Subscription");
