import type Stripe from "stripe";
import { enforce } from "../../platform/auth/policy";
import { sha256Hex } from "../../platform/crypto/encoding";
import { ApiError, type FieldError, validationError } from "../../platform/errors";
import type { PrincipalContext } from "../../platform/service/context";
import {
  callStripe,
  ensureAccount,
  findAccount,
  fromUnix,
  hasLiveSubscription,
  institutionForBilling,
  seatTakers,
} from "./account";
import type { PlanId } from "./plans";
import { priceFor, readPrice } from "./plans";
import { billingScope, mayUseBilling } from "./policy";
import { checkPromotionCode, dropPendingPromo, findPromotionCode, retrievePromotionCode } from "./promo";
import { redirectProblem, redirectRules } from "./redirects";
import { stripeFor } from "./stripe-client";

export interface CheckoutInput {
  plan: PlanId;
  interval: "month" | "year";
  seats?: number;
  success_url: string;
  cancel_url: string;
  promo_code?: string;
}

/**
 * Two identical checkouts without an Idempotency-Key within this window open one session (the
 * double click): Stripe receives the same idempotency key and answers the first session again.
 */
export const CHECKOUT_DEDUP_WINDOW_MS = 60_000;

/** The allowed redirect origins, or 503 when the deployment allows none (nothing could be checked out). */
export function configuredRedirectRules(ctx: PrincipalContext) {
  const rules = redirectRules(ctx.config.billing.redirectOrigins);
  if (rules.length === 0)
    throw new ApiError(
      "billing_not_configured",
      "This deployment allows no redirect origin for billing pages (BILLING_REDIRECT_ORIGINS).",
    );
  return rules;
}

/**
 * A Stripe Checkout Session in subscription mode for the institution's one Stripe customer: the
 * plan's price for `seats` seats, a trial for an institution that never subscribed (card-less where
 * Stripe allows), the given or kept promotion code applied — else codes may be entered on Stripe's
 * page. Stripe receives an idempotency key derived from the request: the caller's Idempotency-Key,
 * or, without one, the request's content within a minute, so a retry or a double click opens one
 * session.
 */
export async function createCheckoutSession(
  ctx: PrincipalContext,
  input: CheckoutInput,
  idempotencyKey: string | undefined,
): Promise<{ id: string; url: string; expires_at: string | null }> {
  enforce(mayUseBilling(ctx.principal));
  const { institutionId } = billingScope(ctx.principal);
  if (input.plan === "enterprise")
    throw new ApiError("contact_sales", "Enterprise is sold through sales, not checkout: contact sales.");
  if (input.plan === "free")
    throw validationError([
      { path: "plan", message: "free needs no checkout; to leave a paid plan, cancel in the billing portal" },
    ]);
  const stripe = await stripeFor(ctx);
  const institution = await institutionForBilling(ctx, institutionId);
  if (institution.plan === "enterprise")
    throw new ApiError(
      "contact_sales",
      "This institution has an Enterprise contract, which changes through sales, not checkout.",
    );

  const rules = configuredRedirectRules(ctx);
  const problems = [
    redirectProblem(input.success_url, "success_url", rules, true),
    redirectProblem(input.cancel_url, "cancel_url", rules),
  ].filter((problem): problem is FieldError => problem !== null);
  const priceId = priceFor(ctx.config.billing, input.plan, input.interval);
  if (!priceId)
    problems.push({ path: "interval", message: `${input.plan} is not sold by the ${input.interval} here` });
  const members = await seatTakers(ctx, institutionId);
  const seats = input.seats ?? Math.max(1, members);
  if (seats < members)
    problems.push({
      path: "seats",
      message: `must be at least ${members}, the institution's invited and active members`,
    });
  if (problems.length > 0) throw validationError(problems);

  const existing = await findAccount(ctx, institutionId);
  if (hasLiveSubscription(existing))
    throw new ApiError(
      "subscription_exists",
      `The institution already has a subscription (${existing.subscriptionStatus}); change it in the billing portal.`,
    );

  const price = priceId ? await readPrice(ctx, priceId) : null;
  if (!priceId || !price)
    throw new ApiError(
      "billing_not_configured",
      `The ${input.interval}ly price of ${input.plan} is not usable.`,
    );
  const account = await ensureAccount(ctx, institution);

  let promotionCode: string | null = null;
  if (input.promo_code !== undefined) {
    const promo = await findPromotionCode(ctx, input.promo_code);
    promotionCode = checkPromotionCode(ctx, promo, account, { price, seats }).promotionCode.id;
  } else if (account.pendingPromotionCodeId) {
    const kept = account.pendingPromotionCodeId;
    const promo = await retrievePromotionCode(ctx, kept);
    try {
      promotionCode = checkPromotionCode(ctx, promo, account, { price, seats }).promotionCode.id;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      await dropPendingPromo(ctx, institutionId, kept);
      throw new ApiError(
        "promo_code_invalid",
        `The promotion code ${promo.code} kept for this checkout can no longer be used (${error.message}) and was removed; start the checkout again, or apply another code.`,
        { extensions: error.extensions },
      );
    }
  }

  const trial = !account.everSubscribed && ctx.config.billing.trialDays > 0;
  const metadata = { institution_id: institutionId };
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: "subscription",
    customer: account.stripeCustomerId,
    client_reference_id: institutionId,
    line_items: [{ price: priceId, quantity: seats }],
    success_url: input.success_url,
    cancel_url: input.cancel_url,
    metadata,
    subscription_data: {
      metadata,
      ...(trial
        ? {
            trial_period_days: ctx.config.billing.trialDays,
            // A card-less trial that ends without a card is cancelled (back to Free at once), not
            // left past_due on Pro while Stripe retries a payment that has no card to charge.
            trial_settings: { end_behavior: { missing_payment_method: "cancel" as const } },
          }
        : {}),
    },
    ...(trial ? { payment_method_collection: "if_required" as const } : {}),
    // Stripe takes one or the other: a code applied here, or a field for one on its page.
    ...(promotionCode ? { discounts: [{ promotion_code: promotionCode }] } : { allow_promotion_codes: true }),
  };
  const scope = idempotencyKey
    ? `key ${ctx.principal.token.id} ${idempotencyKey}`
    : `window ${Math.floor(ctx.now() / CHECKOUT_DEDUP_WINDOW_MS)}`;
  const stripeKey = `checkout-${institutionId}-${(await sha256Hex(`${scope}\n${JSON.stringify(params)}`)).slice(0, 40)}`;
  const session = await callStripe("open the checkout session", () =>
    stripe.checkout.sessions.create(params, { idempotencyKey: stripeKey }),
  );
  if (!session.url)
    throw new ApiError("billing_provider_error", "Stripe opened a checkout session without a page.");
  return { id: session.id, url: session.url, expires_at: fromUnix(session.expires_at) };
}
