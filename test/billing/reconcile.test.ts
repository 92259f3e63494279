import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billingAccounts, institutions } from "../../src/db/schema";
import { reconcileSubscriptions, reconcileWindowStart } from "../../src/domains/billing/reconcile";
import { runSweeps } from "../../src/scheduled";
import { testContext } from "../helpers/context";
import { deliverAll, payCheckout } from "../helpers/stripe";
import {
  accountOf,
  billingTenant,
  checkoutSession,
  db,
  eventsOf,
  institutionOf,
  rateLimitOf,
} from "./sync-support";

// The daily reconciliation: paying institutions read again from Stripe and corrected, each
// correction logged; once a day from 03:17 UTC, a share per minute run.

const DAY_MS = 86_400_000;
const MINUTE = 60_000;
/** Tomorrow's reconciliation start (UTC): later than anything the webhooks of this file stored. */
const tomorrowStart = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS + (3 * 60 + 17) * MINUTE;

afterEach(() => vi.restoreAllMocks());

describe("the window", () => {
  it("opens at 03:17 UTC for an hour", () => {
    expect(reconcileWindowStart(tomorrowStart)).toBe(tomorrowStart);
    expect(reconcileWindowStart(tomorrowStart + 59 * MINUTE)).toBe(tomorrowStart);
    expect(reconcileWindowStart(tomorrowStart + 60 * MINUTE)).toBeNull();
    expect(reconcileWindowStart(tomorrowStart - MINUTE)).toBeNull();
  });
});

describe("reconcileSubscriptions", () => {
  it("corrects a drifted institution to Stripe's state, logs each field, and reads each account once a day", async () => {
    const t = await billingTenant();
    const session = await checkoutSession(t, { trialDays: null, seats: 4 });
    await payCheckout(session.url);
    await deliverAll(t.customer);
    expect(await institutionOf(t.institution.id)).toMatchObject({ plan: "pro", seats: 4 });

    // Drift: a lost event, a hand edit.
    await db()
      .update(institutions)
      .set({ plan: "free", seats: 1 })
      .where(eq(institutions.id, t.institution.id));
    await db()
      .update(billingAccounts)
      .set({ subscriptionStatus: "past_due", quantity: 1 })
      .where(eq(billingAccounts.institutionId, t.institution.id));
    expect(await rateLimitOf(t.admin.token)).toBe(100);

    // Outside the window nothing is read.
    const early = await reconcileSubscriptions(testContext({ now: () => tomorrowStart - MINUTE }));
    expect(early).toEqual({ checked: 0, corrected: 0, failed: 0 });

    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const run = await reconcileSubscriptions(testContext({ now: () => tomorrowStart + MINUTE }));
    expect(run.failed).toBe(0);
    expect(run.corrected).toBeGreaterThanOrEqual(1);
    expect(await institutionOf(t.institution.id)).toMatchObject({ plan: "pro", seats: 4 });
    expect(await accountOf(t.institution.id)).toMatchObject({
      subscriptionStatus: "active",
      quantity: 4,
      syncedAt: new Date(tomorrowStart + MINUTE).toISOString(),
    });
    expect(await rateLimitOf(t.admin.token)).toBe(1000);

    const corrections = warn.mock.calls
      .map(([line]) => JSON.parse(String(line)))
      .filter(
        (l) =>
          l.message === "billing reconciliation corrected a field" && l.institution_id === t.institution.id,
      );
    expect(corrections).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "plan", ours: "free", stripe: "pro" }),
        expect.objectContaining({ field: "seats", ours: 1, stripe: 4 }),
        expect.objectContaining({ field: "subscription_status", ours: "past_due", stripe: "active" }),
        expect.objectContaining({ field: "quantity", ours: 1, stripe: 4 }),
      ]),
    );
    expect((await eventsOf(t.institution.id, "subscription.updated")).at(-1)!.payload).toMatchObject({
      changes: { plan: { from: "free", to: "pro" }, status: { from: "past_due", to: "active" } },
    });

    // Read today already: the next minute's run leaves it alone.
    const again = await reconcileSubscriptions(testContext({ now: () => tomorrowStart + 2 * MINUTE }));
    expect(again.checked).toBe(0);
  });

  it("finds the subscription of a Pro institution whose checkout events never arrived", async () => {
    const t = await billingTenant();
    const session = await checkoutSession(t, { seats: 2 });
    await payCheckout(session.url);
    // None of the events delivered; an operator set the plan by hand meanwhile.
    await db().update(institutions).set({ plan: "pro" }).where(eq(institutions.id, t.institution.id));
    vi.spyOn(console, "warn").mockImplementation(() => undefined);

    // Through the cron, as it runs: every sweep, the reconciliation among them.
    const execution = createExecutionContext();
    await runSweeps(env, execution, tomorrowStart + 3 * MINUTE);
    await waitOnExecutionContext(execution);

    expect(await accountOf(t.institution.id)).toMatchObject({ subscriptionStatus: "trialing", quantity: 2 });
    expect(await institutionOf(t.institution.id)).toMatchObject({ plan: "pro", seats: 2 });
  });
});
