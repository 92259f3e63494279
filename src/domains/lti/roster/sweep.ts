import { and } from "drizzle-orm";
import { ltiRosterSyncs } from "../../../db/schema";
import { nowIso } from "../../../platform/ids";
import { expired, takeLost } from "../../../platform/jobs/lease";
import type { ServiceContext } from "../../../platform/service/context";
import { enqueueRosterSync, failSync, isActive, LEASE } from "./syncs";

/** A queued sync still unfinished this long after it was asked for is given up. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000;
const BATCH = 50;

const TOO_SLOW = "The roster sync did not finish within 24 hours and was given up. Start it again.";

/**
 * The minute cron's roster-sync sweep: an active sync whose lease ran out (the invocation died, or the
 * message it awaited is past its due time and the grace) is taken for a new message of its generation
 * (conditionally, so concurrent sweeps send one), or failed when it is older than a day.
 */
export async function sweepRosterSyncs(ctx: ServiceContext): Promise<{ resumed: number; failed: number }> {
  const now = ctx.now();
  const lost = await ctx.db
    .select({
      id: ltiRosterSyncs.id,
      generation: ltiRosterSyncs.generation,
      createdAt: ltiRosterSyncs.createdAt,
    })
    .from(ltiRosterSyncs)
    .where(and(isActive(), expired(LEASE, now)))
    .limit(BATCH);
  let resumed = 0;
  let failed = 0;
  for (const sync of lost) {
    if (sync.createdAt < nowIso(now - GIVE_UP_AFTER_MS)) {
      if (await failSync(ctx, { id: sync.id, generation: sync.generation, reason: TOO_SLOW })) failed += 1;
      continue;
    }
    if (!(await takeLost(ctx, LEASE, sync))) continue;
    await enqueueRosterSync(ctx, { sync_id: sync.id, generation: sync.generation });
    resumed += 1;
  }
  return { resumed, failed };
}
