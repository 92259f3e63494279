import { eq } from "drizzle-orm";
import type Stripe from "stripe";
import { billingAccounts, stripeEvents } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import type { ServiceContext } from "../../../platform/service/context";
import { enterInstitutionToWrite, findByDirectoryKey } from "../../../platform/service/directory";
import { CLAIM_EVENT_SQL, RELEASE_EVENT_SQL } from "../sql";
import {
  billingSettings,
  isStripeError,
  stripeCryptoProvider,
  stripeErrorType,
  stripeFor,
} from "../stripe-client";
import { idOf } from "../sync-state";
import { applyStripeEvent, ignoring, type WebhookOutcome } from "./apply-event";

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
    return { ...base, outcome: await applyStripeEvent(ctx, event) };
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
