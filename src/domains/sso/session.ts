import { eq, inArray } from "drizzle-orm";
import { ssoSessionCodes, users } from "../../db/schema";
import { codeHash, redeemOnce } from "../../platform/auth/single-use";
import { ApiError } from "../../platform/errors";
import type { ServiceContext } from "../../platform/service/context";
import { enterInstitutionToWrite } from "../../platform/service/directory";
import { createSession } from "../auth/service";
import { institutionOfSsoCode } from "./complete";

/**
 * A finished sign-in's code (single use, 60 s) → a session, exactly as `POST /api/auth/sign-in`
 * makes one. The API's `POST /api/auth/sso/session` and the dashboard's SSO page both call this.
 * A member suspended or removed since the sign-in gets nothing. The code is taken and its member read
 * in one round trip. A code names its institution (`<institution id>.<random>`): it is taken where
 * that institution lives.
 */
export async function exchangeSsoCode(ctx: ServiceContext, code: string) {
  const institutionId = institutionOfSsoCode(code);
  if (institutionId) await enterInstitutionToWrite(ctx, institutionId);
  const { db } = ctx;
  const hash = await codeHash(code);
  const codes = db
    .select({ userId: ssoSessionCodes.userId })
    .from(ssoSessionCodes)
    .where(eq(ssoSessionCodes.codeHash, hash));
  const redeemed = await redeemOnce(
    db,
    ssoSessionCodes,
    { key: eq(ssoSessionCodes.codeHash, hash), now: ctx.now() },
    [db.select().from(users).where(inArray(users.id, codes))] as const,
  );
  const refused = () =>
    new ApiError("invalid_credentials", "The sign-in code is unknown, used or expired; sign in again.");
  if (redeemed.outcome !== "taken") throw refused();
  const [members] = redeemed.alongside;
  const user = members.find(
    (row) => row.id === redeemed.row.userId && row.institutionId === redeemed.row.institutionId,
  );
  if (user?.status !== "active") throw refused();
  return { ...(await createSession(ctx, user)), user };
}
