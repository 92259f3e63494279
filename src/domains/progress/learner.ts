import { and, eq } from "drizzle-orm";
import { users } from "../../db/schema";
import type { Env } from "../../env";
import type { Principal } from "../../platform/auth/principal";
import { database } from "../../platform/db";
import { ApiError } from "../../platform/errors";

/** The learner a request records or reads for: whose rows, which institution's boards, which local day. */
export interface Learner {
  id: string;
  institutionId: string | null;
  timeZone: string;
}

/**
 * Whose progress a request is about. Defaults to the caller; instructors and institution admins may
 * name a member of their own institution, platform staff anyone. Another institution's user is 404,
 * a learner naming somebody else 403.
 */
export async function resolveLearner(
  env: Env,
  principal: Principal,
  userId: string | undefined,
  purpose: "read" | "write",
): Promise<Learner> {
  const self: Learner = {
    id: principal.user.id,
    institutionId: principal.institution?.id ?? null,
    timeZone: principal.user.timeZone,
  };
  if (!userId || userId === principal.user.id) return self;
  const role = principal.user.role;
  const mayActForOthers =
    role === "platform_admin" ||
    role === "institution_admin" ||
    (role === "instructor" && purpose === "read");
  if (!mayActForOthers) {
    throw new ApiError(
      "forbidden",
      `A ${role} may only ${purpose === "read" ? "read" : "record"} their own progress.`,
    );
  }
  const db = database(env.DB);
  const where =
    role === "platform_admin"
      ? eq(users.id, userId)
      : and(eq(users.id, userId), eq(users.institutionId, principal.institution?.id ?? "\u0000"));
  const member = await db
    .select({ id: users.id, institutionId: users.institutionId, timeZone: users.timeZone })
    .from(users)
    .where(where)
    .get();
  if (!member) throw new ApiError("not_found", `No learner ${userId} in your institution.`);
  return member;
}
