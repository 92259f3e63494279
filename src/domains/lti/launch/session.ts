import { eq } from "drizzle-orm";
import { ltiLaunches, ltiSessionCodes, users } from "../../../db/schema";
import { type Ability, ROLE_CEILINGS } from "../../../platform/auth/abilities";
import { codeHash, redeemOnce } from "../../../platform/auth/single-use";
import { ApiError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { enterInstitutionToWrite } from "../../../platform/service/directory";
import { insertToken } from "../../tokens/service";
import { launchRole } from "../claims";
import { launchSessionName } from "../policy";
import type { LaunchRow } from "./launch-log";
import type { UserRow } from "./provision-user";

/** A launch's session for the learning app. */
export const SESSION_TTL_MS = 8 * 3_600_000;

export interface Session {
  token: string;
  token_type: "Bearer";
  expires_at: string;
}

/**
 * What a launch session may never do, whatever the role: mint API tokens (a token minted by an
 * 8-hour session could outlive it, or never expire).
 */
const NOT_IN_LAUNCH_SESSIONS: readonly Ability[] = ["tokens:write"];

/** The abilities of a launch session for a launch role (cut to the user's own role when used). */
export function launchSessionAbilities(role: "instructor" | "learner"): Ability[] {
  return ROLE_CEILINGS[role].filter((a) => !NOT_IN_LAUNCH_SESSIONS.includes(a));
}

/**
 * A session token with the abilities of the role the person launched in (less tokens:write), never
 * beyond the user's own role.
 */
export async function issueSession(
  ctx: ServiceContext,
  input: { user: UserRow; launch: LaunchRow },
): Promise<Session> {
  const { user, launch } = input;
  const expiresAt = nowIso(ctx.now() + SESSION_TTL_MS);
  const { plain } = await insertToken(ctx, {
    owner: { userId: user.id, institutionId: user.institutionId },
    name: launchSessionName(launch.id),
    abilities: launchSessionAbilities(launchRole(launch.roles ?? [])),
    expiresAt,
    kind: "session",
  });
  return { token: plain, token_type: "Bearer", expires_at: expiresAt };
}

/** A browser's code (single use, two minutes; it names its institution) → the launch's session. */
export async function exchangeCode(ctx: ServiceContext, code: string) {
  // `<institution id>.<random>`: taken where the institution lives (design/multi-database.md).
  const dot = code.indexOf(".");
  if (dot > 0) await enterInstitutionToWrite(ctx, code.slice(0, dot));
  const { db } = ctx;
  const redeemed = await redeemOnce(db, ltiSessionCodes, {
    key: eq(ltiSessionCodes.codeHash, await codeHash(code)),
    now: ctx.now(),
  });
  const taken = redeemed.outcome === "taken" ? redeemed.row : null;
  if (!taken)
    throw new ApiError(
      "invalid_credentials",
      "The launch code is unknown, used or expired; launch again from the platform.",
    );
  const row = await db
    .select({ launch: ltiLaunches, user: users })
    .from(ltiLaunches)
    .innerJoin(users, eq(users.id, ltiLaunches.userId))
    .where(eq(ltiLaunches.id, taken.launchId))
    .get();
  if (!row) throw new ApiError("invalid_credentials", "The launch of this code no longer exists.");
  return {
    launch: row.launch,
    user: row.user,
    session: await issueSession(ctx, { user: row.user, launch: row.launch }),
  };
}
