import type { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type Stripe from "stripe";
import { billingAccounts } from "../../db/schema";
import { enforce } from "../../platform/auth/policy";
import { ApiError } from "../../platform/errors";
import type { PrincipalContext, ServiceContext } from "../../platform/service/context";
import {
  type BillingAccount,
  callStripe,
  ensureAccount,
  findAccount,
  hasLiveSubscription,
  institutionForBilling,
} from "./account";
import { type PlanPrice, priceFor, readPrice } from "./plans";
import { billingScope, mayUseBilling } from "./policy";
import { presentCouponDiscount } from "./present";
import type { AppliedPromoSchema, PromoRefusal } from "./schemas";
import { stripeFor } from "./stripe-client";

/**
 * Promotion codes: looked up in Stripe and checked before anything uses them, by apply-promo and by
 * checkout alike, so that a code refused here is refused for the same reason there.
 */

/** What a code is checked against: the order, as far as it is known. */
export interface PromoOrder {
  /** The price (its product and currency) the code would discount. */
  price: PlanPrice;
  /** Seats; null when the order's size is not known yet (a code kept for the next checkout). */
  seats: number | null;
}

export interface CheckedPromo {
  promotionCode: Stripe.PromotionCode;
  coupon: Stripe.Coupon;
}

export function promoRefused(reason: PromoRefusal, detail: string): ApiError {
  return new ApiError("promo_code_invalid", detail, { extensions: { reason } });
}

const EXPAND = ["promotion.coupon.applies_to"];

/** The promotion code spelt `code` (Stripe matches codes case-insensitively), an active one first. */
export async function findPromotionCode(ctx: ServiceContext, code: string): Promise<Stripe.PromotionCode> {
  const stripe = await stripeFor(ctx);
  const list = await callStripe("look up the promotion code", () =>
    stripe.promotionCodes.list({ code, limit: 10, expand: EXPAND.map((path) => `data.${path}`) }),
  );
  const found = list.data.find((promo) => promo.active) ?? list.data[0];
  if (!found) throw promoRefused("not_found", `No promotion code ${code}.`);
  return found;
}

export async function retrievePromotionCode(ctx: ServiceContext, id: string): Promise<Stripe.PromotionCode> {
  const stripe = await stripeFor(ctx);
  return callStripe("read the promotion code", () => stripe.promotionCodes.retrieve(id, { expand: EXPAND }));
}

/** Whether the institution has been a paying customer: first-time codes are for those who have not. */
function hasSubscribedBefore(account: BillingAccount | null): boolean {
  if (!account?.everSubscribed) return false;
  // A first subscription still in its trial has paid nothing yet.
  return account.subscriptionStatus !== "trialing";
}

/**
 * Checks a promotion code as Stripe would at redemption, and says why not: expired (its own end or
 * its coupon's), exhausted (its or its coupon's redemptions used up), inactive, or not applicable
 * (another customer's, first-time customers only, below its minimum amount, other products, an
 * amount in another currency). The minimum amount is checked when the order's size is known.
 */
export function checkPromotionCode(
  ctx: ServiceContext,
  promo: Stripe.PromotionCode,
  account: BillingAccount | null,
  order: PromoOrder,
): CheckedPromo {
  const coupon = promo.promotion.coupon;
  if (!coupon || typeof coupon === "string") throw new Error("promotion code read without its coupon");
  const now = Math.floor(ctx.now() / 1000);
  const code = promo.code;
  if (
    (promo.expires_at !== null && promo.expires_at <= now) ||
    (coupon.redeem_by !== null && coupon.redeem_by <= now)
  )
    throw promoRefused("expired", `The promotion code ${code} has expired.`);
  if (
    (promo.max_redemptions !== null && promo.times_redeemed >= promo.max_redemptions) ||
    (coupon.max_redemptions !== null && coupon.times_redeemed >= coupon.max_redemptions)
  )
    throw promoRefused("exhausted", `The promotion code ${code} has been redeemed as often as it may be.`);
  if (!promo.active) throw promoRefused("inactive", `The promotion code ${code} is not active.`);
  if (!coupon.valid) throw promoRefused("expired", `The promotion code ${code} is no longer valid.`);
  const customer = typeof promo.customer === "string" ? promo.customer : (promo.customer?.id ?? null);
  if (customer !== null && customer !== account?.stripeCustomerId)
    throw promoRefused("not_applicable", `The promotion code ${code} is for another customer.`);
  if (promo.restrictions.first_time_transaction && hasSubscribedBefore(account))
    throw promoRefused("not_applicable", `The promotion code ${code} is for first-time customers only.`);
  const products = coupon.applies_to?.products ?? [];
  if (products.length > 0 && !products.includes(order.price.product))
    throw promoRefused("not_applicable", `The promotion code ${code} does not apply to this plan.`);
  if (coupon.amount_off !== null && coupon.currency !== order.price.currency)
    throw promoRefused("not_applicable", `The promotion code ${code} is an amount in another currency.`);
  const { minimum_amount: minimum, minimum_amount_currency: minimumCurrency } = promo.restrictions;
  if (minimum !== null && order.seats !== null) {
    const amount = order.price.unit_amount * order.seats;
    if (minimumCurrency !== order.price.currency || amount < minimum)
      throw promoRefused(
        "not_applicable",
        `The promotion code ${code} needs an order of at least ${minimum} ${minimumCurrency?.toUpperCase()} (minor units); this one is ${amount} ${order.price.currency.toUpperCase()}.`,
      );
  }
  return { promotionCode: promo, coupon };
}

/** The price a code kept for the next checkout is checked against: Pro's, monthly if sold. */
async function nextCheckoutPrice(ctx: ServiceContext): Promise<PlanPrice> {
  const priceId = priceFor(ctx.config.billing, "pro", "month") ?? priceFor(ctx.config.billing, "pro", "year");
  const price = priceId ? await readPrice(ctx, priceId) : null;
  if (!price)
    throw new ApiError(
      "billing_not_configured",
      "This deployment sells no plan through checkout (no Pro price is configured).",
    );
  return price;
}

type AppliedPromo = z.infer<typeof AppliedPromoSchema>;

/**
 * Applies a promotion code: to the running subscription when there is one (Stripe applies it; the
 * subscription's state here follows through Stripe's webhook), else kept for the institution's next
 * checkout (its Stripe customer is created for it). Applying the same code again answers the same.
 */
export async function applyPromo(ctx: PrincipalContext, input: { code: string }): Promise<AppliedPromo> {
  enforce(mayUseBilling(ctx.principal));
  const { institutionId } = billingScope(ctx.principal);
  const institution = await institutionForBilling(ctx, institutionId);
  const account = await findAccount(ctx, institutionId);

  if (hasLiveSubscription(account)) {
    const price = account.priceId ? await readPrice(ctx, account.priceId) : null;
    if (!price)
      throw new ApiError("billing_provider_error", "The subscription's price could not be read from Stripe.");
    const promo = await findPromotionCode(ctx, input.code);
    const subscriptionId = account.subscriptionId as string;
    const stripe = await stripeFor(ctx);
    // Already applied (asked twice, or before the webhook told us): the same answer, no second redemption.
    const subscription = await callStripe("read the subscription", () =>
      stripe.subscriptions.retrieve(subscriptionId, { expand: ["discounts"] }),
    );
    const applied = subscription.discounts.some((discount) => {
      if (typeof discount === "string") return false;
      const code = discount.promotion_code;
      return (typeof code === "string" ? code : code?.id) === promo.id;
    });
    if (applied) {
      const coupon = promo.promotion.coupon as Stripe.Coupon;
      return {
        code: promo.code,
        applied_to: "subscription",
        discount: presentCouponDiscount(coupon, promo.code),
      };
    }
    const { coupon } = checkPromotionCode(ctx, promo, account, {
      price,
      seats: subscription.items.data[0]?.quantity ?? account.quantity ?? 1,
    });
    await callStripe("apply the promotion code to the subscription", () =>
      stripe.subscriptions.update(subscriptionId, { discounts: [{ promotion_code: promo.id }] }),
    );
    return {
      code: promo.code,
      applied_to: "subscription",
      discount: presentCouponDiscount(coupon, promo.code),
    };
  }

  const price = await nextCheckoutPrice(ctx);
  const promo = await findPromotionCode(ctx, input.code);
  const { coupon } = checkPromotionCode(ctx, promo, account, { price, seats: null });
  const kept = await ensureAccount(ctx, institution);
  await ctx.db
    .update(billingAccounts)
    .set({
      pendingPromotionCodeId: promo.id,
      pendingPromoCode: promo.code,
      updatedAt: new Date(ctx.now()).toISOString(),
    })
    .where(eq(billingAccounts.institutionId, kept.institutionId))
    .run();
  return {
    code: promo.code,
    applied_to: "next_checkout",
    discount: presentCouponDiscount(coupon, promo.code),
  };
}

/** Forgets a kept code that no longer applies, unless another request has kept another one meanwhile. */
export async function dropPendingPromo(ctx: ServiceContext, institutionId: string, promotionCodeId: string) {
  await ctx.db
    .update(billingAccounts)
    .set({
      pendingPromotionCodeId: null,
      pendingPromoCode: null,
      updatedAt: new Date(ctx.now()).toISOString(),
    })
    .where(
      and(
        eq(billingAccounts.institutionId, institutionId),
        eq(billingAccounts.pendingPromotionCodeId, promotionCodeId),
      ),
    )
    .run();
}
