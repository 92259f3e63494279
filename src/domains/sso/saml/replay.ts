import { and, eq, lt } from "drizzle-orm";
import { samlAssertionReplays } from "../../../db/schema";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";

/**
 * Accepts an assertion ID once: true the first time, false for a replay. The insert is the check
 * (the primary key, ON CONFLICT DO NOTHING), so of two concurrent posts of one Response exactly one
 * is accepted. The same batch forgets the institution's IDs whose assertions have expired: an
 * expired assertion is refused by its NotOnOrAfter before it gets here, so nothing needs them.
 */
export async function acceptAssertionOnce(
  ctx: ServiceContext,
  {
    institutionId,
    assertionId,
    acceptableUntilMs,
  }: { institutionId: string; assertionId: string; acceptableUntilMs: number },
): Promise<boolean> {
  const { db } = ctx;
  const now = nowIso(ctx.now());
  const [, inserted] = await db.batch([
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
  ]);
  return inserted.length === 1;
}
