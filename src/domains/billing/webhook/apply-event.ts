import type Stripe from "stripe";
import { domainEvent, type OutboxRow } from "../../../platform/events";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { dropPendingPromo } from "../promo";
import { stripeFor } from "../stripe-client";
import { type ApplyOutcome, applySubscription, markProcessed, syncedAccount } from "../sync";
import { idOf, retrieveSubscription, type SubscriptionState, subscriptionState } from "../sync-state";

/**
 * What a verified Stripe event does, by type: the object it concerns is read again from Stripe and
 * that state applied (sync.ts); the event's own copy is never trusted.
 */

export type WebhookOutcome = "applied" | "unchanged" | "duplicate" | "ignored";

export async function applyStripeEvent(ctx: ServiceContext, event: Stripe.Event): Promise<WebhookOutcome> {
  switch (event.type) {
    case "checkout.session.completed":
      return checkoutCompleted(ctx, event);
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted":
      return applyRead(ctx, event, null, event.data.object.id);
    case "customer.subscription.trial_will_end":
      return applyRead(ctx, event, null, event.data.object.id, trialWillEnd);
    case "invoice.paid":
      return invoiceEvent(ctx, event, event.data.object.id);
    case "invoice.payment_failed":
      return invoiceEvent(ctx, event, event.data.object.id, true);
    default:
      await markProcessed(ctx, event.id, null);
      return "ignored";
  }
}

/** An event about nothing of ours: logged, recorded as handled, answered `ignored`. */
export function ignoring(
  ctx: ServiceContext,
  event: Stripe.Event,
  why: string,
  detail: Record<string, unknown> = {},
) {
  console.warn(
    JSON.stringify({
      level: "warn",
      message: `billing webhook: ${why}; event ignored`,
      request_id: ctx.requestId,
      stripe_event: event.id,
      type: event.type,
      ...detail,
    }),
  );
  return markProcessed(ctx, event.id, null).then(() => "ignored" as const);
}

/**
 * A checkout finished: the institution is the session's `client_reference_id` (or its
 * `metadata.institution_id`), and only when its billing account is the session's customer; then the
 * session's subscription is read and applied.
 */
async function checkoutCompleted(ctx: ServiceContext, event: Stripe.Event): Promise<WebhookOutcome> {
  const sessionId = (event.data.object as { id: string }).id;
  const session = await (await stripeFor(ctx)).checkout.sessions.retrieve(sessionId);
  if (session.mode !== "subscription" || !session.subscription) {
    return ignoring(ctx, event, "checkout session without a subscription", { session: sessionId });
  }
  const institutionId = session.client_reference_id ?? session.metadata?.institution_id ?? null;
  const customerId = idOf(session.customer);
  const account = institutionId ? await syncedAccount(ctx, { institutionId }) : null;
  if (!account || account.stripeCustomerId !== customerId) {
    return ignoring(ctx, event, "checkout session of no institution's Stripe customer", {
      session: sessionId,
      customer: customerId,
    });
  }
  // The promotion code kept for this checkout (apply-promo without a subscription) is used now.
  // (Forgotten only if it is still the one kept: the SQL compares.)
  for (const discount of session.discounts ?? []) {
    const used = idOf(discount.promotion_code ?? null);
    if (used) await dropPendingPromo(ctx, account.institutionId, used);
  }
  return applyRead(ctx, event, account.institutionId, idOf(session.subscription) ?? "");
}

async function invoiceEvent(
  ctx: ServiceContext,
  event: Stripe.Event,
  invoiceId: string,
  failed = false,
): Promise<WebhookOutcome> {
  const invoice = await (await stripeFor(ctx)).invoices.retrieve(invoiceId);
  const legacy = invoice as unknown as { subscription?: string | { id: string } | null };
  const subscriptionId =
    idOf(invoice.parent?.subscription_details?.subscription) ?? idOf(legacy.subscription ?? null);
  if (!subscriptionId) return ignoring(ctx, event, "invoice of no subscription", { invoice: invoiceId });
  return applyRead(ctx, event, null, subscriptionId, failed ? paymentFailed(invoice) : undefined);
}

type ExtraEvents = (
  ctx: ServiceContext,
  institutionId: string,
) => (state: SubscriptionState, plan: string) => OutboxRow[];

/**
 * Reads the subscription from Stripe, finds the institution by its customer (checking it against
 * `institutionId` when the event named one), and applies it.
 */
async function _applyRead(
  ctx: ServiceContext,
  event: Stripe.Event,
  institutionId: string | null,
  subscriptionId: string,
  extraEvents?: ExtraEvents,
): Promise<WebhookOutcome> {
  const readAt = new Date(ctx.now()).toISOString();
  const subscription = await retrieveSubscription(ctx, subscriptionId);
  const state = subscriptionState(subscription);
  const account = await syncedAccount(ctx, { customerId: state.customerId });
  if (!account || (institutionId !== null && account.institutionId !== institutionId)) {
    return ignoring(ctx, event, "subscription of no institution's Stripe customer", {
      subscription: subscriptionId,
      customer: state.customerId,
    });
  }
  const result: ApplyOutcome = await applySubscription(ctx, {
    institutionId: account.institutionId,
    state,
    readAt,
    stripeEventId: event.id,
    ...(extraEvents ? { extraEvents: extraEvents(ctx, account.institutionId) } : {}),
  });
  if (result.outcome === "applied") return result.differences.length > 0 ? "applied" : "unchanged";
  return result.outcome === "stale" ? "unchanged" : "ignored";
}

/**
 * Reads the subscription from Stripe, finds the institution by its customer (checking it against
 * `institutionId` when the event named one), and applies it.
 */
async function applyRead(
  ctx: ServiceContext,
  event: Stripe.Event,
  institutionId: string | null,
  subscriptionId: string,
  extraEvents?: ExtraEvents,
): Promise<WebhookOutcome> {
  const readAt = new Date(ctx.now()).toISOString();
  const subscription = await retrieveSubscription(ctx, subscriptionId);
  const state = subscriptionState(subscription);
  const account = await syncedAccount(ctx, { customerId: state.customerId });
  if (!account || (institutionId !== null && account.institutionId !== institutionId)) {
    return ignoring(ctx, event, "subscription of no institution's Stripe customer", {
      subscription: subscriptionId,
      customer: state.customerId,
    });
  }
  const result: ApplyOutcome = await applySubscription(ctx, {
    institutionId: account.institutionId,
    state,
    readAt,
    stripeEventId: event.id,
    ...(extraEvents ? { extraEvents: extraEvents(ctx, account.institutionId) } : {}),
  });
  if (result.outcome === "applied") return result.differences.length > 0 ? "applied" : "unchanged";
  return result.outcome === "stale" ? "unchanged" : "ignored";
}

/** `trial.will_end`: when the trial ends and what happens then. */
const trialWillEnd: ExtraEvents = (ctx, institutionId) => (state, plan) => {
  if (state.status !== "trialing") return [];
  return [
    domainEvent(
      "trial.will_end",
      { institutionId, userId: null },
      {
        subscription_id: state.subscriptionId,
        plan,
        trial_end: state.trialEnd,
        payment_method_on_file: state.paymentMethodOnFile,
        // Without a payment method the first invoice cannot be paid: Free once Stripe gives up on it.
        at_trial_end:
          state.paymentMethodOnFile && !state.cancelAtPeriodEnd ? "subscription_starts" : "downgrade_to_free",
      },
      nowIso(ctx.now()),
    ),
  ];
};

/** `invoice.payment_failed`: which invoice, how much, and when Stripe tries again. */
function paymentFailed(invoice: Stripe.Invoice): ExtraEvents {
  return (ctx, institutionId) => (state) => [
    domainEvent(
      "invoice.payment_failed",
      { institutionId, userId: null },
      {
        invoice_id: invoice.id,
        subscription_id: state.subscriptionId,
        subscription_status: state.status,
        amount_due: invoice.amount_due,
        currency: invoice.currency,
        attempt_count: invoice.attempt_count,
        next_payment_attempt: invoice.next_payment_attempt
          ? nowIso(invoice.next_payment_attempt * 1000)
          : null,
      },
      nowIso(ctx.now()),
    ),
  ];
}
