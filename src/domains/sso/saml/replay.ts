import { and, eq, lt } from "drizzle-orm";
import { samlAssertionReplays } from "../../../db/schema";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";

interface AssertionOnce {
  institutionId: string;
  assertionId: string;
  acceptableUntilMs: number;
}

/**
 * The statements that accept an assertion ID once, for a batch: the insert is the check (the
 * primary key, ON CONFLICT DO NOTHING), so of two concurrent posts of one Response exactly one is
 * accepted; `firstTime` reads the batch's results. The same batch forgets the institution's IDs whose
 * assertions have expired: an expired assertion is refused by its NotOnOrAfter before it gets here,
 * so nothing needs them. The ACS runs them in the round trip that looks the member up.
 */
export function acceptOnceStatements(
  ctx: ServiceContext,
  { institutionId, assertionId, acceptableUntilMs }: AssertionOnce,
) {
  const { db } = ctx;
  const now = nowIso(ctx.now());
  return [
    db
      .delete(samlAssertionReplays)
      .where(
        and(eq(samlAssertionReplays.institutionId, institutionId), lt(samlAssertionReplays.expiresAt, now)),
      ),
    db
      .insert(samlAssertionReplays)
      .values({ institutionId, assertionId, expiresAt: nowIso(acceptableUntilMs), createdAt: now })
      .onConflictDoNothing()
      .returning({ assertionId: samlAssertionReplays.assertionId }),
  ] as const;
}

/** True when the batch of `acceptOnceStatements` inserted the ID (its first use), false for a replay. */
export function firstTime([, inserted]: readonly [unknown, readonly unknown[]]): boolean {
  return inserted.length === 1;
}

/** Accepts an assertion ID once, on its own round trip: true the first time, false for a replay. */
export async function acceptAssertionOnce(ctx: ServiceContext, input: AssertionOnce): Promise<boolean> {
  return firstTime(await ctx.db.batch(acceptOnceStatements(ctx, input)));
}
