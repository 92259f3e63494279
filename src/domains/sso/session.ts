import { and, eq } from "drizzle-orm";
import { ssoSessionCodes, users } from "../../db/schema";
import { codeHash, redeemOnce } from "../../platform/auth/single-use";
import { ApiError } from "../../platform/errors";
import type { ServiceContext } from "../../platform/service/context";
import { createSession } from "../auth/service";

/**
 * A finished sign-in's code (single use, 60 s) → a session, exactly as `POST /api/auth/sign-in`
 * makes one. The API's `POST /api/auth/sso/session` and the dashboard's SSO page both call this.
 * A member suspended or removed since the sign-in gets nothing.
 */
export async function exchangeSsoCode(ctx: ServiceContext, code: string) {
  const redeemed = await redeemOnce(ctx.db, ssoSessionCodes, {
    key: eq(ssoSessionCodes.codeHash, await codeHash(code)),
    now: ctx.now(),
  });
  const refused = () =>
    new ApiError("invalid_credentials", "The sign-in code is unknown, used or expired; sign in again.");
  if (redeemed.outcome !== "taken") throw refused();
  const user = await ctx.db
    .select()
    .from(users)
    .where(and(eq(users.id, redeemed.row.userId), eq(users.institutionId, redeemed.row.institutionId)))
    .get();
  if (user?.status !== "active") throw refused();
  return { ...(await createSession(ctx, user)), user };
}
