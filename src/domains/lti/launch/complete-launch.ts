import { and, eq, gt, isNull } from "drizzle-orm";
import { ltiLaunches, ltiSessionCodes, users } from "../../../db/schema";
import type { Env } from "../../../env";
import { type Ability, ROLE_CEILINGS } from "../../../platform/auth/abilities";
import { randomBytes, sha256Hex, toBase64Url } from "../../../platform/crypto/encoding";
import { database } from "../../../platform/db";
import { ApiError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import { invocationContext } from "../../../platform/service/context";
import { insertToken } from "../../tokens/service";
import { launchRole } from "../claims";
import { type LaunchRow, recordRefusal, resolveTarget, succeededLaunch } from "./launch-log";
import { identityFrom, provisionUser, type UserRow } from "./provision-user";
import { LaunchRefusal, validateLaunch } from "./verify-id-token";

/** A launch's session for the learning app. */
export const SESSION_TTL_MS = 8 * 3_600_000;
/** A browser has this long to exchange the code of its launch URL's fragment. */
const CODE_TTL_MS = 2 * 60_000;

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
async function issueSession(env: Env, user: UserRow, launch: LaunchRow): Promise<Session> {
  const expiresAt = nowIso(Date.now() + SESSION_TTL_MS);
  // Migration shim until the launch path takes the service context: a context of this invocation.
  const ctx = invocationContext({
    env,
    requestId: `lti_${launch.id}`,
    waitUntil: (p) => void p.catch(() => 0),
  });
  const { plain } = await insertToken(ctx, {
    owner: { userId: user.id, institutionId: user.institutionId },
    name: `LTI launch ${launch.id}`,
    abilities: launchSessionAbilities(launchRole(launch.roles ?? [])),
    expiresAt,
    kind: "session",
  });
  return { token: plain, token_type: "Bearer", expires_at: expiresAt };
}

export interface LaunchForm {
  id_token?: string;
  state?: string;
  error?: string;
  error_description?: string;
}

export type LaunchOutcome = { launch: LaunchRow; user: UserRow } & (
  | { session: Session; code?: undefined }
  | { code: string; session?: undefined }
);

function refusedError(refusal: LaunchRefusal, launchId: string): ApiError {
  return new ApiError(refusal.upstream ? "bad_gateway" : "lti_launch_refused", refusal.message, {
    extensions: { reason: refusal.reason, launch_id: launchId },
  });
}

/**
 * The launch callback (the shared one, or a registration's own: `registrationId`): validates the platform's form post, then finds or creates the user, records
 * the launch, and answers a session (JSON clients) or a single-use code for the app (browsers). A
 * refused launch is recorded in the launch log and nothing else, and throws a problem naming why.
 */
export async function completeLaunch(
  env: Env,
  form: LaunchForm,
  stateCookie: (state: string) => string | undefined,
  origin: string,
  answer: "session" | "code",
  registrationId?: string,
): Promise<LaunchOutcome> {
  let valid: Awaited<ReturnType<typeof validateLaunch>>;
  let target: Awaited<ReturnType<typeof resolveTarget>>;
  let user: UserRow;
  try {
    valid = await validateLaunch(env, form, stateCookie, origin, registrationId);
    target = await resolveTarget(env, valid.claims, valid.consumer);
    const roles = (valid.claims["https://purl.imsglobal.org/spec/lti/claim/roles"] as unknown[]).filter(
      (r): r is string => typeof r === "string",
    );
    user = await provisionUser(env, valid.consumer, identityFrom(valid.claims, launchRole(roles)));
  } catch (error) {
    if (!(error instanceof LaunchRefusal)) throw error;
    const logged = await recordRefusal(env, error);
    throw refusedError(error, logged.id);
  }
  const { consumer, claims } = valid;
  const launch = succeededLaunch(env, consumer, claims, user.id, target);
  const db = database(env.DB);
  if (answer === "session") {
    await db.insert(ltiLaunches).values(launch).run();
    return { launch, user, session: await issueSession(env, user, launch) };
  }
  const code = toBase64Url(randomBytes(32));
  await db.batch([
    db.insert(ltiLaunches).values(launch),
    db.insert(ltiSessionCodes).values({
      codeHash: await sha256Hex(code),
      launchId: launch.id,
      expiresAt: Date.now() + CODE_TTL_MS,
      usedAt: null,
    }),
  ]);
  return { launch, user, code };
}

/** A browser's code (single use, two minutes) → the launch's session. */
export async function exchangeCode(env: Env, code: string) {
  const db = database(env.DB);
  const now = Date.now();
  const [taken] = await db
    .update(ltiSessionCodes)
    .set({ usedAt: now })
    .where(
      and(
        eq(ltiSessionCodes.codeHash, await sha256Hex(code)),
        isNull(ltiSessionCodes.usedAt),
        gt(ltiSessionCodes.expiresAt, now),
      ),
    )
    .returning();
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
  return { launch: row.launch, user: row.user, session: await issueSession(env, row.user, row.launch) };
}
