import { and, asc, eq, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import type Stripe from "stripe";
import { billingAccounts, institutions } from "../../db/schema";
import type { ServiceContext } from "../../platform/service/context";
import { stripeFor } from "./stripe-client";
import { applySubscription, syncedAccount } from "./sync";
import { hasEnded, retrieveSubscription, subscriptionState } from "./sync-state";

/**
 * The daily reconciliation: every institution that pays (a billing account with a subscription, or
 * the Pro plan) is read again from Stripe and corrected, in case a webhook was lost or mis-applied
 * — each corrected field logged as structured JSON (field, ours, Stripe's). It starts at
 * RECONCILE_AT (UTC) each day and continues on the minute cron's runs, at most RECONCILE_BATCH
 * accounts a run, until every paying account has been read since that day's start (or the window
 * closes: what is left waits for the next day). An account a webhook synced since the start counts
 * as read. docs/design/billing.md, "Reconciliation".
 */

/** The minute of the day (UTC) the reconciliation starts at: 03:17, away from the hour's crowd. */
export const RECONCILE_AT = { hour: 3, minute: 17 } as const;
/** How long after its start the day's reconciliation keeps going (one run a minute). */
export const RECONCILE_WINDOW_MS = 60 * 60_000;
/** Accounts read from Stripe per cron run (one request each, well inside Stripe's rate limit). */
export const RECONCILE_BATCH = 25;

const DAY_MS = 86_400_000;

/** The start of the reconciliation that `now` falls in, or null outside its window. */
export function reconcileWindowStart(now: number): number | null {
  const midnight = Math.floor(now / DAY_MS) * DAY_MS;
  let start = midnight + (RECONCILE_AT.hour * 60 + RECONCILE_AT.minute) * 60_000;
  if (start > now) start -= DAY_MS;
  return now - start < RECONCILE_WINDOW_MS ? start : null;
}

export interface ReconcileResult {
  checked: number;
  corrected: number;
  failed: number;
}

/** The sweep: this run's share of the day's reconciliation (nothing outside its window). */
export async function reconcileSubscriptions(ctx: ServiceContext): Promise<ReconcileResult> {
  const result: ReconcileResult = { checked: 0, corrected: 0, failed: 0 };
  const start = reconcileWindowStart(ctx.now());
  if (start === null || !ctx.config.billing.secretKey) return result;
  const due = await ctx.db
    .select({ institutionId: billingAccounts.institutionId })
    .from(billingAccounts)
    .innerJoin(institutions, eq(institutions.id, billingAccounts.institutionId))
    .where(
      and(
        or(isNotNull(billingAccounts.subscriptionId), eq(institutions.plan, "pro")),
        or(isNull(billingAccounts.syncedAt), lt(billingAccounts.syncedAt, new Date(start).toISOString())),
      ),
    )
    .orderBy(
      sql`${billingAccounts.syncedAt} IS NOT NULL`,
      asc(billingAccounts.syncedAt),
      asc(billingAccounts.institutionId),
    )
    .limit(RECONCILE_BATCH);
  for (const { institutionId } of due) {
    result.checked += 1;
    try {
      if (await reconcileAccount(ctx, institutionId)) result.corrected += 1;
    } catch (error) {
      result.failed += 1;
      console.error(
        JSON.stringify({
          level: "error",
          message: "billing reconciliation failed for an institution; retried on the next run",
          request_id: ctx.requestId,
          institution_id: institutionId,
          error: String(error),
        }),
      );
    }
  }
  return result;
}

/**
 * Reads one institution's subscription from Stripe and applies it; true when something was
 * corrected. An account without a subscription id (a Pro institution whose checkout event never
 * arrived) looks for its customer's subscriptions: the live one, else the newest.
 */
export async function reconcileAccount(ctx: ServiceContext, institutionId: string): Promise<boolean> {
  const account = await syncedAccount(ctx, { institutionId });
  if (!account) return false;
  const readAt = new Date(ctx.now()).toISOString();
  let subscription: Stripe.Subscription | null;
  if (account.subscriptionId) subscription = await retrieveSubscription(ctx, account.subscriptionId);
  else subscription = await latestSubscription(ctx, account.stripeCustomerId);
  if (!subscription) {
    console.warn(
      JSON.stringify({
        level: "warn",
        message:
          "billing reconciliation: institution on a paid plan without a Stripe subscription; left as it is",
        request_id: ctx.requestId,
        institution_id: institutionId,
        plan: account.plan,
      }),
    );
    // Read: not due again today.
    await ctx.db
      .update(billingAccounts)
      .set({ syncedAt: readAt })
      .where(and(eq(billingAccounts.institutionId, institutionId), isNull(billingAccounts.subscriptionId)))
      .run();
    return false;
  }
  const outcome = await applySubscription(ctx, {
    institutionId,
    state: subscriptionState(subscription),
    readAt,
  });
  if (outcome.outcome !== "applied" || outcome.differences.length === 0) return false;
  for (const difference of outcome.differences) {
    console.warn(
      JSON.stringify({
        level: "warn",
        message: "billing reconciliation corrected a field",
        request_id: ctx.requestId,
        institution_id: institutionId,
        subscription_id: subscription.id,
        field: difference.field,
        ours: difference.ours,
        stripe: difference.stripe,
      }),
    );
  }
  return true;
}

async function latestSubscription(
  ctx: ServiceContext,
  customerId: string,
): Promise<Stripe.Subscription | null> {
  const list = await (await stripeFor(ctx)).subscriptions.list({
    customer: customerId,
    status: "all",
    limit: 10,
  });
  const byNewest = [...list.data].sort((a, b) => b.created - a.created);
  const chosen =
    byNewest.find((s) => !hasEnded(s.status as Parameters<typeof hasEnded>[0])) ?? byNewest[0] ?? null;
  return chosen ? retrieveSubscription(ctx, chosen.id) : null;
}
