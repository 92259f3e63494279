import { and, eq } from "drizzle-orm";
import { users } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import type { PrincipalContext } from "../../platform/service/context";
import { learnerScope } from "./policy";

/** The learner a request records or reads for: whose rows, which institution's boards, which local day. */
export interface Learner {
  id: string;
  institutionId: string | null;
  timeZone: string;
}

/**
 * Whose progress a request is about: the caller when `userId` is absent or their own, otherwise the
 * named user within the caller's `learnerScope` (404 outside it). The route has already asked
 * `mayActFor` whether the caller may name somebody else at all.
 */
export async function resolveLearner(ctx: PrincipalContext, userId: string | undefined): Promise<Learner> {
  const { principal } = ctx;
  if (!userId || userId === principal.user.id) {
    return {
      id: principal.user.id,
      institutionId: principal.institution?.id ?? null,
      timeZone: principal.user.timeZone,
    };
  }
  const scope = learnerScope(principal);
  const where =
    "everyone" in scope
      ? eq(users.id, userId)
      : and(eq(users.id, userId), eq(users.institutionId, scope.institutionId ?? "\u0000"));
  const member = await ctx.db
    .select({ id: users.id, institutionId: users.institutionId, timeZone: users.timeZone })
    .from(users)
    .where(where)
    .get();
  if (!member) throw new ApiError("not_found", `No learner ${userId} in your institution.`);
  return member;
}
