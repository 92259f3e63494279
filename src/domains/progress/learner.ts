import { and, eq } from "drizzle-orm";
import { users } from "../../db/schema";
import type { Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { everyDatabase, type PrincipalContext, useDatabase } from "../../platform/service/context";
import { FIRST_DATABASE } from "../../platform/service/databases";
import { enterInstitutionToWrite, useInstitutionDatabase } from "../../platform/service/directory";
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
 * `mayActFor` whether the caller may name somebody else at all. A member of the caller's institution
 * lives in the caller's database; a user platform staff name may live in any: the request then
 * carries on in theirs (`write`: refused while a move switches their institution over).
 */
export async function resolveLearner(
  ctx: PrincipalContext,
  userId: string | undefined,
  options: { write?: boolean } = {},
): Promise<Learner> {
  const { principal } = ctx;
  if (!userId || userId === principal.user.id) {
    return {
      id: principal.user.id,
      institutionId: principal.institution?.id ?? null,
      timeZone: principal.user.timeZone,
    };
  }
  const scope = learnerScope(principal);
  const member =
    "everyone" in scope
      ? await userAnywhere(ctx, userId, options.write ?? false)
      : await learnerIn(
          ctx.db,
          and(eq(users.id, userId), eq(users.institutionId, scope.institutionId ?? "\u0000")),
        );
  if (!member) throw new ApiError("not_found", `No learner ${userId} in your institution.`);
  return member;
}

function learnerIn(db: Database, where: ReturnType<typeof and>) {
  return db
    .select({ id: users.id, institutionId: users.institutionId, timeZone: users.timeZone })
    .from(users)
    .where(where)
    .get();
}

/**
 * A user by id in whichever database holds them (platform staff's reach,
 * design/multi-database.md#platform-wide-reads): the invocation's database first, then every other
 * in parallel, one primary-key read each. A member's database is the one the directory names for
 * their institution (during a move's copy they are read in both), and the invocation moves there.
 */
async function userAnywhere(ctx: PrincipalContext, userId: string, write: boolean) {
  const byId = eq(users.id, userId);
  const here = await learnerIn(ctx.db, byId);
  if (here?.institutionId && write) await enterInstitutionToWrite(ctx, here.institutionId);
  if (here || ctx.database !== FIRST_DATABASE) return here;
  const others = everyDatabase(ctx).filter((db) => db.name !== ctx.database);
  const found = await Promise.all(others.map(async (db) => ({ db, row: await learnerIn(db.db, byId) })));
  const hit = found.find((candidate) => candidate.row);
  if (!hit?.row) return undefined;
  if (!hit.row.institutionId) {
    // A former member whose data stayed where their institution lived.
    useDatabase(ctx, hit.db.name);
    return hit.row;
  }
  if (write) await enterInstitutionToWrite(ctx, hit.row.institutionId);
  else await useInstitutionDatabase(ctx, hit.row.institutionId);
  return ctx.database === hit.db.name ? hit.row : await learnerIn(ctx.db, byId);
}
