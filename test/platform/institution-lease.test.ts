import { describe, expect, it } from "vitest";
import type { InstitutionBudget } from "../../src/platform/ratelimit/institution-budget";
import { InstitutionLease } from "../../src/platform/ratelimit/institution-lease";
import type { LeaseGrant, LeaseReturn } from "../../src/platform/ratelimit/lease-terms";

// A plan change resets a token gate's lease; a lease call still out at that moment answers for the
// old plan's limits, and must neither be used nor leave its share in the headers.

const WINDOW = 60;
const FREE = { limit: 300, user: { id: "u1", limit: 150 } };
const PRO = { limit: 5_000, user: { id: "u1", limit: 2_500 } };

function grantOf(limits: typeof FREE, granted: number): LeaseGrant {
  return {
    granted,
    second: 1,
    limit: limits.limit,
    remaining: limits.limit - granted,
    resetSeconds: WINDOW,
    retryAfterSeconds: 0,
    windowSeconds: WINDOW,
    share: { limit: limits.user.limit, remaining: limits.user.limit - granted, resetSeconds: WINDOW },
  };
}

/** A stand-in for the institution's object whose lease answers the test releases one by one. */
function budgetStub() {
  const asked: Array<{ limit: number; answer: (grant: LeaseGrant) => void }> = [];
  const givenBack: LeaseReturn[] = [];
  const stub = {
    lease: (limit: number) =>
      new Promise<LeaseGrant>((answer) => {
        asked.push({ limit, answer });
      }),
    giveBack: async (units: LeaseReturn) => {
      givenBack.push(units);
    },
  };
  return { asked, givenBack, get: () => stub as unknown as DurableObjectStub<InstitutionBudget> };
}

describe("InstitutionLease across a plan change", () => {
  it("gives back a grant asked for under the old plan, and answers with the new plan's share", async () => {
    const budget = budgetStub();
    const lease = new InstitutionLease(budget.get);
    const now = Date.now();

    const first = lease.take(now, FREE, WINDOW);
    expect(first).toBeInstanceOf(Promise);
    await Promise.resolve();
    expect(budget.asked.map((a) => a.limit)).toEqual([FREE.limit]);

    // The plan changes while the Free lease is out.
    lease.reset();
    budget.asked[0]!.answer(grantOf(FREE, 6));
    // The request that asked is asked again, now under the limits it brought (still Free: its
    // principal was read before the change); a later request brings Pro's.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(budget.givenBack).toEqual([{ second: 1, units: 6, userId: "u1" }]);
    expect(budget.asked).toHaveLength(2);
    budget.asked[1]!.answer(grantOf(FREE, 6));
    expect(await first).toBeNull();

    lease.reset();
    const afterChange = lease.take(now, PRO, WINDOW);
    await Promise.resolve();
    budget.asked[2]!.answer(grantOf(PRO, 100));
    expect(await afterChange).toBeNull();
    expect(lease.shareIfTighter(now, WINDOW, 999)).toBeNull();
    expect(lease.shareIfTighter(now, WINDOW, 5_000)).toMatchObject({ limit: PRO.user.limit });
  });

  it("does not keep the share of a Free grant that lands after the reset", async () => {
    const budget = budgetStub();
    const lease = new InstitutionLease(budget.get);
    const now = Date.now();
    // A Free lease, half used, renewing in the background.
    const first = lease.take(now, FREE, WINDOW);
    await Promise.resolve();
    budget.asked[0]!.answer(grantOf(FREE, 2));
    expect(await first).toBeNull();
    expect(lease.take(now, FREE, WINDOW)).toBeNull();
    expect(budget.asked).toHaveLength(2);

    lease.reset();
    budget.asked[1]!.answer(grantOf(FREE, 4));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(lease.shareIfTighter(now, WINDOW, 999)).toBeNull();
    expect(budget.givenBack.reduce((sum, r) => sum + r.units, 0)).toBe(4);
  });
});
