import { lt } from "drizzle-orm";
import { ssoRequests, ssoSessionCodes } from "../../db/schema";
import type { ServiceContext } from "../../platform/service/context";

/** A pending request or code is kept an hour past its expiry (a late callback still reads "expired"), then deleted. */
const KEEP_EXPIRED_MS = 3_600_000;

/**
 * The minute cron's SSO housekeeping: expired pending requests and sign-in codes go. (The SSO log
 * is kept: it is the institution's record of who signed in.)
 */
export async function sweepSso(ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const before = ctx.now() - KEEP_EXPIRED_MS;
  await db.batch([
    db.delete(ssoRequests).where(lt(ssoRequests.expiresAt, before)),
    db.delete(ssoSessionCodes).where(lt(ssoSessionCodes.expiresAt, before)),
  ]);
}
