import { lt, sql } from "drizzle-orm";
import { ltiLaunches, ltiRegistrationLinks, ltiSessionCodes, ltiStates } from "../../../db/schema";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";

/** A login state or launch code is kept an hour past its expiry (the log says why a late one failed), then deleted. */
const KEEP_EXPIRED_MS = 3_600_000;
const SWEEP_LIMIT = 1_000;
/** Refused launches stay in the log this long (accepted ones stay: their passbacks and targets need them). */
const REFUSED_LAUNCH_RETENTION_MS = 30 * 86_400_000;
/** A dynamic-registration link, used or not, is kept this long past its expiry (what it made stays). */
const EXPIRED_LINK_RETENTION_MS = 30 * 86_400_000;

/**
 * The minute cron's LTI housekeeping: expired states and codes go, refused launches go after 30 days
 * (in slices, so a flood of forged callbacks cannot make one sweep long), and dynamic-registration
 * links 30 days after they expired. (Stalled passbacks are
 * queued again by ../grades/sweep.ts.)
 */
export async function sweepLti(ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const now = ctx.now();
  const before = now - KEEP_EXPIRED_MS;
  await db.batch([
    db.delete(ltiStates).where(lt(ltiStates.expiresAt, before)),
    db.delete(ltiSessionCodes).where(lt(ltiSessionCodes.expiresAt, before)),
    db
      .delete(ltiLaunches)
      .where(
        sql`${ltiLaunches.id} IN (SELECT id FROM lti_launches WHERE status = 'failed' AND created_at < ${nowIso(now - REFUSED_LAUNCH_RETENTION_MS)} LIMIT ${SWEEP_LIMIT * 5})`,
      ),
    db
      .delete(ltiRegistrationLinks)
      .where(lt(ltiRegistrationLinks.expiresAt, now - EXPIRED_LINK_RETENTION_MS)),
  ]);
}
