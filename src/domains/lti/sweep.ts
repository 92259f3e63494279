import { lt, sql } from "drizzle-orm";
import { ltiLaunches, ltiPassbacks, ltiSessionCodes, ltiStates } from "../../db/schema";
import type { Env } from "../../env";
import { database } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import { enqueuePassbacks } from "./passback-target";

/** A login state or launch code is kept an hour past its expiry (the log says why a late one failed), then deleted. */
const KEEP_EXPIRED_MS = 3_600_000;
/** A passback this late past its due time (or unclaimed this long) has lost its queue message. */
const STALLED_AFTER_MS = 600_000;
const SWEEP_LIMIT = 1_000;
/** Refused launches stay in the log this long (accepted ones stay: their passbacks and targets need them). */
const REFUSED_LAUNCH_RETENTION_MS = 30 * 86_400_000;

/**
 * The minute cron's LTI housekeeping: expired states and codes go, refused launches go after 30 days
 * (in slices, so a flood of forged callbacks cannot make one sweep long), stalled passbacks are queued again.
 */
export async function sweepLti(env: Env, now: number): Promise<number> {
  const db = database(env.DB);
  const before = now - KEEP_EXPIRED_MS;
  await db.batch([
    db.delete(ltiStates).where(lt(ltiStates.expiresAt, before)),
    db.delete(ltiSessionCodes).where(lt(ltiSessionCodes.expiresAt, before)),
    db
      .delete(ltiLaunches)
      .where(
        sql`${ltiLaunches.id} IN (SELECT id FROM lti_launches WHERE status = 'failed' AND created_at < ${nowIso(now - REFUSED_LAUNCH_RETENTION_MS)} LIMIT ${SWEEP_LIMIT * 5})`,
      ),
  ]);
  const stalled = await db
    .update(ltiPassbacks)
    .set({ nextAttemptAt: now })
    .where(
      sql`${ltiPassbacks.id} IN (SELECT id FROM lti_passbacks WHERE status IN ('pending', 'retrying')
        AND coalesce(next_attempt_at, 0) < ${now - STALLED_AFTER_MS}
        AND (claimed_until IS NULL OR claimed_until < ${now})
        AND created_at < ${nowIso(now - STALLED_AFTER_MS)} LIMIT ${SWEEP_LIMIT})`,
    )
    .returning({ id: ltiPassbacks.id });
  if (stalled.length > 0)
    await enqueuePassbacks(
      env,
      stalled.map((p) => p.id),
    );
  return stalled.length;
}
