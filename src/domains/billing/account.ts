import { and, count, eq, inArray } from "drizzle-orm";
import { billingAccounts, institutions, type SubscriptionStatus, users } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import { commit } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { directoryClaim } from "../../platform/service/directory";
import { isStripeError, stripeFor } from "./stripe-client";

/**
 * An institution's billing account as this side of billing reads and creates it: the one Stripe
 * customer (created once), and the state of the subscription the webhook keeps (read here, written
 * by the sync). Every Stripe call of the endpoints goes through `callStripe`, so that Stripe's
 * failures answer one problem.
 */

export type BillingAccount = typeof billingAccounts.$inferSelect;

/** Statuses of a subscription that still runs (or can still be paid): a second checkout would double it. */
export const LIVE_STATUSES: readonly SubscriptionStatus[] = ["trialing", "active", "past_due", "unpaid"];

export function hasLiveSubscription(account: BillingAccount | null): account is BillingAccount {
  return Boolean(
    account?.subscriptionId &&
      account.subscriptionStatus &&
      LIVE_STATUSES.includes(account.subscriptionStatus),
  );
}

export async function findAccount(
  ctx: ServiceContext,
  institutionId: string,
): Promise<BillingAccount | null> {
  const row = await ctx.db
    .select()
    .from(billingAccounts)
    .where(eq(billingAccounts.institutionId, institutionId))
    .get();
  return row ?? null;
}

export interface InstitutionBilling {
  id: string;
  name: string;
  slug: string;
  plan: (typeof institutions.$inferSelect)["plan"];
  seats: number | null;
}

export async function institutionForBilling(
  ctx: ServiceContext,
  institutionId: string,
): Promise<InstitutionBilling> {
  const row = await ctx.db
    .select({
      id: institutions.id,
      name: institutions.name,
      slug: institutions.slug,
      plan: institutions.plan,
      seats: institutions.seats,
    })
    .from(institutions)
    .where(eq(institutions.id, institutionId))
    .get();
  if (!row) throw new ApiError("not_found", `No institution ${institutionId}.`);
  return row;
}

/** Members that take a seat: invited and active ones (the seat guard's count). */
export async function seatTakers(ctx: ServiceContext, institutionId: string): Promise<number> {
  const row = await ctx.db
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.institutionId, institutionId), inArray(users.status, ["invited", "active"])))
    .get();
  return row?.n ?? 0;
}

/**
 * The institution's billing account, its Stripe customer created first if it has none. The customer
 * is created once whatever the races: Stripe's idempotency key `customer-<institution id>` makes
 * concurrent or retried creations one customer for 24 hours, and the row is inserted with
 * ON CONFLICT DO NOTHING and read back, so the first row stays. Its parameters carry nothing that
 * can change between two attempts (only the institution's id, in `metadata.institution_id`), so a
 * retry is never refused as an idempotency-key reuse; its name is set by a second call.
 */
export async function ensureAccount(
  ctx: ServiceContext,
  institution: InstitutionBilling,
): Promise<BillingAccount> {
  const existing = await findAccount(ctx, institution.id);
  if (existing) return existing;
  const stripe = await stripeFor(ctx);
  const customer = await callStripe("create the customer", () =>
    stripe.customers.create(
      { metadata: { institution_id: institution.id } },
      { idempotencyKey: `customer-${institution.id}` },
    ),
  );
  await callStripe("name the customer", () =>
    stripe.customers.update(customer.id, {
      name: institution.name,
      metadata: { institution_id: institution.id, institution_slug: institution.slug },
    }),
  );
  const now = new Date(ctx.now()).toISOString();
  await commit(ctx, {
    statements: [
      ctx.db
        .insert(billingAccounts)
        .values({
          institutionId: institution.id,
          stripeCustomerId: customer.id,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing(),
    ],
    // Outside DB, Stripe's webhook finds the institution by its customer's directory key
    // (design/multi-database.md#entry-points); the same customer every retry (the idempotency key).
    claims: [
      directoryClaim("stripe_customer", customer.id, institution.id, "billing_accounts.stripe_customer_id"),
    ],
  });
  const account = await findAccount(ctx, institution.id);
  if (!account) throw new Error(`billing account of ${institution.id} missing after insert`);
  return account;
}

/**
 * Runs a Stripe call; any failure of Stripe (unreachable, 5xx, a refusal of a request of ours)
 * becomes 502 `billing_provider_error`, logged with what Stripe said (never a session's URL: no
 * answer of Stripe's is logged). Errors of ours pass through.
 */
export async function callStripe<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!isStripeError(error)) throw error;
    console.error(
      JSON.stringify({
        level: "error",
        message: `Stripe failed to ${what}`,
        stripe_type: error.type,
        stripe_code: error.code ?? null,
        stripe_status: error.statusCode ?? null,
        stripe_request_id: error.requestId ?? null,
        stripe_message: error.message,
      }),
    );
    throw new ApiError("billing_provider_error", `Stripe could not ${what}; nothing was charged. Try again.`);
  }
}

/** ISO 8601 (seconds) of a Unix time in seconds, as Stripe gives times. */
export function fromUnix(seconds: number | null | undefined): string | null {
  return seconds === null || seconds === undefined
    ? null
    : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}
