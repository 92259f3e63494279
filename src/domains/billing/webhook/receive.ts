import { eq } from "drizzle-orm";
import type Stripe from "stripe";
import { billingAccounts, stripeEvents } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import { domainEvent, type OutboxRow } from "../../../platform/events";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { enterInstitutionToWrite, findByDirectoryKey } from "../../../platform/service/directory";
import { dropPendingPromo } from "../promo";
import { CLAIM_EVENT_SQL, RELEASE_EVENT_SQL } from "../sql";
import {
  billingSettings,
  isStripeError,
  stripeCryptoProvider,
  stripeErrorType,
  stripeFor,
} from "../stripe-client";
import { type ApplyOutcome, applySubscription, markProcessed, syncedAccount } from "../sync";
import { idOf, retrieveSubscription, type SubscriptionState, subscriptionState } from "../sync-state";

/**
 * Stripe → Lingua: `POST /api/billing/webhook`. The event is verified over the raw body, taken in
 * hand once (stripe_events), and never trusted for state: the subscription it concerns is read
 * again from Stripe and that state applied (sync.ts). docs/design/billing.md, "Stripe → Lingua".
 */

/** Stripe's default tolerance: a signature older than this is refused, against replays. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * How long a delivery holds an event it took in hand: a concurrent delivery of the same event meanwhile
 * is refused (409, Stripe retries it); after it the handling is taken to have died and the next
 * delivery handles the event again. Longer than a handling can take (the Stripe client's 10 s
 * timeout, twice retried).
 */
export const CLAIM_MS = 60_000;

/** The event types that change or tell something; every other type is recorded and ignored. */
export const HANDLED_EVENT_TYPES = [
  "checkout.session.completed",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "customer.subscription.trial_will_end",
  "invoice.paid",
  "invoice.payment_failed",
] as const;

export type WebhookOutcome = "applied" | "unchanged" | "duplicate" | "ignored";

export interface WebhookResult {
  eventId: string;
  type: string;
  outcome: WebhookOutcome;
}

/** The verified event, or `400 webhook_signature_invalid`. */
async function verifiedEvent(
  ctx: ServiceContext,
  raw: string,
  signature: string | undefined,
): Promise<Stripe.Event> {
  const { webhookSecret } = billingSettings(ctx);
  if (!webhookSecret) {
    throw new ApiError("billing_not_configured", "Billing is not configured on this deployment.");
  }
  if (!signature) throw new ApiError("webhook_signature_invalid", "The Stripe-Signature header is missing.");
  try {
    return await (await stripeFor(ctx)).webhooks.constructEventAsync(
      raw,
      signature,
      webhookSecret,
      SIGNATURE_TOLERANCE_SECONDS,
      await stripeCryptoProvider(),
      // Milliseconds (the SDK divides by 1000): the invocation's clock, which tests can move.
      ctx.now(),
    );
  } catch (error) {
    const stale = error instanceof Error && /tolerance/i.test(error.message);
    throw new ApiError(
      "webhook_signature_invalid",
      stale
        ? `The Stripe-Signature timestamp is older than ${SIGNATURE_TOLERANCE_SECONDS} seconds.`
        : "The Stripe-Signature does not match the body under this endpoint's signing secret.",
    );
  }
}

/**
 * Handles one delivery: verify, take the event in hand (a handled event is a `duplicate`, one a
 * concurrent delivery holds is `409 webhook_event_in_progress`), apply, mark handled in the same
 * batch. A handling that fails lets go of the event and fails the delivery, so Stripe retries it.
 */
export async function receiveStripeEvent(
  ctx: ServiceContext,
  raw: string,
  signature: string | undefined,
): Promise<WebhookResult> {
  const event = await verifiedEvent(ctx, raw, signature);
  await toCustomersDatabase(ctx, event);
  const now = ctx.now();
  const claimedAt = new Date(now).toISOString();
  const claim = await ctx.d1
    .prepare(CLAIM_EVENT_SQL)
    .bind(event.id, event.type, claimedAt, new Date(now - CLAIM_MS).toISOString())
    .run();
  const base = { eventId: event.id, type: event.type };
  if ((claim.meta.changes ?? 0) === 0) {
    const row = await ctx.db
      .select({ processedAt: stripeEvents.processedAt })
      .from(stripeEvents)
      .where(eq(stripeEvents.id, event.id))
      .get();
    if (row?.processedAt) return { ...base, outcome: "duplicate" };
    throw new ApiError(
      "webhook_event_in_progress",
      `Stripe event ${event.id} is being handled by another delivery.`,
      { headers: { "Retry-After": String(Math.ceil(CLAIM_MS / 1000)) } },
    );
  }
  try {
    return { ...base, outcome: await handle(ctx, event) };
  } catch (error) {
    // The object the event names is gone from Stripe (deleted test data, another account's id): no
    // retry can help, so the event is recorded as ignored rather than failed for three days.
    if (
      isStripeError(error) &&
      error.type === "StripeInvalidRequestError" &&
      error.code === "resource_missing"
    ) {
      return {
        ...base,
        outcome: await ignoring(ctx, event, "its object is not in Stripe", { error: error.message }),
      };
    }
    await ctx.d1
      .prepare(RELEASE_EVENT_SQL)
      .bind(event.id, claimedAt)
      .run()
      .catch(() => undefined);
    throw asApiError(error);
  }
}

/**
 * Moves the invocation to the database of the institution whose Stripe customer the event is about
 * (its `customer`: subscriptions, invoices, checkout sessions): in DB, else by the customer's
 * directory key (design/multi-database.md#entry-points). The event is then taken in hand, applied
 * and marked handled there, in one database as before. An event of no customer of ours stays in DB.
 */
async function toCustomersDatabase(ctx: ServiceContext, event: Stripe.Event): Promise<void> {
  const customer = idOf((event.data.object as { customer?: string | { id: string } | null }).customer);
  if (!customer) return;
  const found = await findByDirectoryKey(ctx, "stripe_customer", customer, () =>
    ctx.db
      .select({ institutionId: billingAccounts.institutionId })
      .from(billingAccounts)
      .where(eq(billingAccounts.stripeCustomerId, customer))
      .get(),
  );
  // While a move switches the institution: 503, and Stripe delivers the event again later.
  if (found) await enterInstitutionToWrite(ctx, found.institutionId);
}

/** Stripe could not be reached or failed: 503, and Stripe retries the delivery. */
function asApiError(error: unknown): unknown {
  if (
    ["StripeConnectionError", "StripeAPIError", "StripeRateLimitError"].includes(stripeErrorType(error) ?? "")
  ) {
    return new ApiError("service_unavailable", "Stripe could not be reached; the event was not applied.", {
      headers: { "Retry-After": "60" },
    });
  }
  return error;
}

async function handle(ctx: ServiceContext, event: Stripe.Event): Promise<WebhookOutcome> {
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

function ignoring(
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
