import { and, eq, isNull } from "drizzle-orm";
import type { Plan } from "../../db/schema";
import { billingAccounts, institutions } from "../../db/schema";
import { domainEvent, type OutboxRow } from "../../platform/events";
import { nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { refreshPrincipals } from "../members/principal-refresh";
import {
  INSTITUTION_FOLLOWS_SQL,
  MARK_EVENT_PROCESSED_IF_CHANGED_SQL,
  MARK_EVENT_PROCESSED_SQL,
} from "./sql";
import { entitlementOf, governs, type SubscriptionState } from "./sync-state";

/**
 * Applying a subscription's state, as Stripe answered it, to the institution: the billing account's
 * subscription columns, the institution's plan and seats, and `subscription.updated` when something
 * an integrator cares about changed — in one batch (commit-and-publish). Whatever order events,
 * their retries and the reconciliation finish in, an older read never overwrites a newer one: each
 * write is conditional on the account still carrying the `synced_at` it was computed from, and a
 * read older than the stored one is dropped (docs/design/billing.md, "Stripe → Lingua").
 */

/** The billing account and the institution fields it drives, as the sync reads them. */
export interface SyncedAccount {
  institutionId: string;
  stripeCustomerId: string;
  everSubscribed: boolean;
  subscriptionId: string | null;
  subscriptionStatus: SubscriptionState["status"] | null;
  priceId: string | null;
  interval: SubscriptionState["interval"];
  quantity: number | null;
  currentPeriodStart: string | null;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  canceledAt: string | null;
  trialStart: string | null;
  trialEnd: string | null;
  discount: SubscriptionState["discount"];
  latestInvoiceStatus: string | null;
  paymentMethodOnFile: boolean;
  syncedAt: string | null;
  plan: Plan;
  seats: number | null;
}

const ACCOUNT_COLUMNS = {
  institutionId: billingAccounts.institutionId,
  stripeCustomerId: billingAccounts.stripeCustomerId,
  everSubscribed: billingAccounts.everSubscribed,
  subscriptionId: billingAccounts.subscriptionId,
  subscriptionStatus: billingAccounts.subscriptionStatus,
  priceId: billingAccounts.priceId,
  interval: billingAccounts.interval,
  quantity: billingAccounts.quantity,
  currentPeriodStart: billingAccounts.currentPeriodStart,
  currentPeriodEnd: billingAccounts.currentPeriodEnd,
  cancelAtPeriodEnd: billingAccounts.cancelAtPeriodEnd,
  canceledAt: billingAccounts.canceledAt,
  trialStart: billingAccounts.trialStart,
  trialEnd: billingAccounts.trialEnd,
  discount: billingAccounts.discount,
  latestInvoiceStatus: billingAccounts.latestInvoiceStatus,
  paymentMethodOnFile: billingAccounts.paymentMethodOnFile,
  syncedAt: billingAccounts.syncedAt,
  plan: institutions.plan,
  seats: institutions.seats,
};

/** The billing account of an institution, or of a Stripe customer; null when there is none. */
export async function syncedAccount(
  ctx: ServiceContext,
  by: { institutionId: string } | { customerId: string },
): Promise<SyncedAccount | null> {
  const row = await ctx.db
    .select(ACCOUNT_COLUMNS)
    .from(billingAccounts)
    .innerJoin(institutions, eq(institutions.id, billingAccounts.institutionId))
    .where(
      "institutionId" in by
        ? eq(billingAccounts.institutionId, by.institutionId)
        : eq(billingAccounts.stripeCustomerId, by.customerId),
    )
    .get();
  return (row as SyncedAccount | undefined) ?? null;
}

/** One field that differs between ours and Stripe's. */
export interface Difference {
  field: string;
  ours: unknown;
  stripe: unknown;
}

/** The subscription's fields an integrator sees change (`subscription.updated`), ours against Stripe's. */
function visibleChanges(
  account: SyncedAccount,
  state: SubscriptionState,
  plan: Plan,
  seats: number | null,
): Record<string, { from: unknown; to: unknown }> {
  const pairs: [string, unknown, unknown][] = [
    ["status", account.subscriptionStatus, state.status],
    ["plan", account.plan, plan],
    ["interval", account.interval, state.interval],
    ["seats", account.seats, seats],
    ["current_period_start", account.currentPeriodStart, state.currentPeriodStart],
    ["current_period_end", account.currentPeriodEnd, state.currentPeriodEnd],
    ["cancel_at_period_end", account.cancelAtPeriodEnd, state.cancelAtPeriodEnd],
  ];
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, from, to] of pairs) if (from !== to) changes[field] = { from, to };
  return changes;
}

/** Every stored field that differs from Stripe's: what the reconciliation logs when it corrects a row. */
export function differences(
  account: SyncedAccount,
  state: SubscriptionState,
  plan: Plan,
  seats: number | null,
): Difference[] {
  const pairs: [string, unknown, unknown][] = [
    ["subscription_id", account.subscriptionId, state.subscriptionId],
    ["subscription_status", account.subscriptionStatus, state.status],
    ["price_id", account.priceId, state.priceId],
    ["interval", account.interval, state.interval],
    ["quantity", account.quantity, state.quantity],
    ["current_period_start", account.currentPeriodStart, state.currentPeriodStart],
    ["current_period_end", account.currentPeriodEnd, state.currentPeriodEnd],
    ["cancel_at_period_end", account.cancelAtPeriodEnd, state.cancelAtPeriodEnd],
    ["canceled_at", account.canceledAt, state.canceledAt],
    ["trial_start", account.trialStart, state.trialStart],
    ["trial_end", account.trialEnd, state.trialEnd],
    ["discount", JSON.stringify(account.discount ?? null), JSON.stringify(state.discount)],
    ["latest_invoice_status", account.latestInvoiceStatus, state.latestInvoiceStatus],
    ["payment_method_on_file", account.paymentMethodOnFile, state.paymentMethodOnFile],
    ["plan", account.plan, plan],
    ["seats", account.seats, seats],
  ];
  return pairs
    .filter(([, ours, stripe]) => ours !== stripe)
    .map(([field, ours, stripe]) => ({ field, ours, stripe }));
}

export interface ApplyInput {
  institutionId: string;
  state: SubscriptionState;
  /** When the subscription was read from Stripe (ISO 8601 with milliseconds): the `synced_at` it writes. */
  readAt: string;
  /** The Stripe event being handled: marked processed in the same batch (and only there). */
  stripeEventId?: string;
  /** Events the Stripe event itself publishes (trial.will_end, invoice.payment_failed), once. */
  extraEvents?: (state: SubscriptionState, plan: Plan) => OutboxRow[];
}

export type ApplyOutcome =
  | { outcome: "applied"; differences: Difference[]; planChanged: boolean; eventIds: string[] }
  /** The account holds a newer read, or follows another subscription: nothing written but the event's mark. */
  | { outcome: "stale" | "not_current" | "no_account" };

const MAX_ATTEMPTS = 4;

/**
 * Writes `state` to the institution's billing account and the plan and seats it implies to the
 * institution, with `subscription.updated` when a visible field changed; refreshes the cached
 * principals of the institution's tokens when the plan changed, so the next request carries the
 * new rate limit. A write that lost a race with another (the account changed since it was read)
 * reads the account again and starts over.
 */
export async function applySubscription(ctx: ServiceContext, input: ApplyInput): Promise<ApplyOutcome> {
  const { institutionId, state, readAt } = input;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const account = await syncedAccount(ctx, { institutionId });
    if (!account) {
      await markProcessed(ctx, input.stripeEventId, null);
      return { outcome: "no_account" };
    }
    if (!governs(account, state)) {
      await markProcessed(ctx, input.stripeEventId, institutionId);
      return { outcome: "not_current" };
    }
    if (account.syncedAt !== null && account.syncedAt > readAt) {
      // A newer read is stored already; the event's own notices (trial, failed payment) still go out.
      await markProcessed(ctx, input.stripeEventId, institutionId, input.extraEvents?.(state, account.plan));
      return { outcome: "stale" };
    }
    const entitlement = entitlementOf(ctx, state);
    if (!entitlement) {
      console.warn(
        JSON.stringify({
          level: "warn",
          message: "billing: subscription price is not sold by this deployment; plan left as it is",
          institution_id: institutionId,
          subscription_id: state.subscriptionId,
          price_id: state.priceId,
        }),
      );
    }
    // An Enterprise contract is never changed by billing (INSTITUTION_FOLLOWS_SQL).
    const enterprise = account.plan === "enterprise";
    const plan = enterprise || !entitlement ? account.plan : entitlement.plan;
    const seats = enterprise || !entitlement ? account.seats : entitlement.seats;
    const now = ctx.now();
    const nowText = new Date(now).toISOString();
    const changes = visibleChanges(account, state, plan, seats);
    const events: OutboxRow[] = [];
    if (Object.keys(changes).length > 0) {
      events.push(
        domainEvent(
          "subscription.updated",
          { institutionId, userId: null },
          {
            subscription_id: state.subscriptionId,
            status: state.status,
            plan,
            interval: state.interval,
            seats,
            current_period_start: state.currentPeriodStart,
            current_period_end: state.currentPeriodEnd,
            cancel_at_period_end: state.cancelAtPeriodEnd,
            trial_end: state.trialEnd,
            changes,
            updated_at: nowIso(now),
          },
          nowIso(now),
        ),
      );
    }
    events.push(...(input.extraEvents?.(state, plan) ?? []));
    const statements: Writable[] = [
      ctx.db
        .update(billingAccounts)
        .set({
          everSubscribed:
            account.everSubscribed || !["incomplete", "incomplete_expired"].includes(state.status),
          subscriptionId: state.subscriptionId,
          subscriptionStatus: state.status,
          priceId: state.priceId,
          interval: state.interval,
          quantity: state.quantity,
          currentPeriodStart: state.currentPeriodStart,
          currentPeriodEnd: state.currentPeriodEnd,
          cancelAtPeriodEnd: state.cancelAtPeriodEnd,
          canceledAt: state.canceledAt,
          trialStart: state.trialStart,
          trialEnd: state.trialEnd,
          discount: state.discount,
          latestInvoiceStatus: state.latestInvoiceStatus,
          paymentMethodOnFile: state.paymentMethodOnFile,
          syncedAt: readAt,
          updatedAt: nowText,
        })
        .where(
          and(
            eq(billingAccounts.institutionId, institutionId),
            account.syncedAt === null
              ? isNull(billingAccounts.syncedAt)
              : eq(billingAccounts.syncedAt, account.syncedAt),
          ),
        ),
      ctx.d1.prepare(INSTITUTION_FOLLOWS_SQL).bind(institutionId, plan, seats, nowIso(now)),
    ];
    if (input.stripeEventId) {
      statements.push(
        ctx.d1.prepare(MARK_EVENT_PROCESSED_IF_CHANGED_SQL).bind(input.stripeEventId, nowText, institutionId),
      );
    }
    const { results, eventIds } = await commit(ctx, { statements, events, eventsIfLastChanged: true });
    if ((results[0]?.meta.changes ?? 0) === 0) continue;
    const planChanged = plan !== account.plan;
    // The cached principal carries the plan and its limit: the next request of every token re-reads it.
    if (planChanged) await refreshPrincipals(ctx, { institutionId });
    return {
      outcome: "applied",
      differences: differences(account, state, plan, seats),
      planChanged,
      eventIds,
    };
  }
  throw new Error(
    `billing: the account of ${institutionId} kept changing while its subscription was applied`,
  );
}

/**
 * Marks a Stripe event handled without applying anything (an event about nothing of ours, an
 * older read, another subscription), with the outbox events it publishes on its own; the events are
 * written only by the delivery whose mark took.
 */
export async function markProcessed(
  ctx: ServiceContext,
  stripeEventId: string | undefined,
  institutionId: string | null,
  events: OutboxRow[] = [],
): Promise<void> {
  if (!stripeEventId) return;
  await commit(ctx, {
    statements: [
      ctx.d1
        .prepare(MARK_EVENT_PROCESSED_SQL)
        .bind(stripeEventId, new Date(ctx.now()).toISOString(), institutionId),
    ],
    events,
    eventsIfLastChanged: true,
  });
}
