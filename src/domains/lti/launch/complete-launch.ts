import { ltiLaunches, ltiSessionCodes } from "../../../db/schema";
import { codeHash as hashOf, newSecret } from "../../../platform/auth/single-use";
import { ApiError } from "../../../platform/errors";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { launchRole } from "../claims";
import { type LaunchRow, recordRefusal } from "./launch-log";
import { resolveTarget, succeededLaunch } from "./launch-record";
import { identityFrom, provisionUser, type UserRow } from "./provision-user";
import { LaunchRefusal } from "./refusal";
import { issueSession, type Session } from "./session";
import { type LaunchCallback, validateLaunch } from "./verify-id-token";

/** A browser has this long to exchange the code of its launch URL's fragment. */
const CODE_TTL_MS = 2 * 60_000;

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
 * The launch callback (the shared one, or a registration's own: `registrationId`): validates the
 * platform's form post, then finds or creates the user, records the launch, and answers a session
 * (JSON clients: `answer` "session") or a single-use code for the app (browsers: "code"). A refused
 * launch is recorded in the launch log and nothing else, and throws a problem naming why.
 */
export async function completeLaunch(
  ctx: ServiceContext,
  input: LaunchCallback & { answer: "session" | "code" },
): Promise<LaunchOutcome> {
  let valid: Awaited<ReturnType<typeof validateLaunch>>;
  let target: Awaited<ReturnType<typeof resolveTarget>>;
  let user: UserRow;
  try {
    valid = await validateLaunch(ctx, input);
    target = await resolveTarget(ctx, valid);
    const roles = (valid.claims["https://purl.imsglobal.org/spec/lti/claim/roles"] as unknown[]).filter(
      (r): r is string => typeof r === "string",
    );
    user = await provisionUser(ctx, {
      consumer: valid.consumer,
      person: identityFrom(valid.claims, launchRole(roles)),
    });
  } catch (error) {
    if (!(error instanceof LaunchRefusal)) throw error;
    const logged = await recordRefusal(ctx, error);
    throw refusedError(error, logged.id);
  }
  const { consumer, claims } = valid;
  const launch = succeededLaunch(ctx, { consumer, claims, userId: user.id, target });
  const { db } = ctx;
  if (input.answer === "session") {
    await db.insert(ltiLaunches).values(launch).run();
    return { launch, user, session: await issueSession(ctx, { user, launch }) };
  }
  // The code names the launch's institution, so that exchanging it runs where the institution lives.
  const code = `${consumer.institutionId}.${newSecret()}`;
  const codeHash = await hashOf(code);
  await commit(ctx, {
    statements: [
      db.insert(ltiLaunches).values(launch),
      db.insert(ltiSessionCodes).values({
        codeHash,
        launchId: launch.id,
        expiresAt: ctx.now() + CODE_TTL_MS,
        usedAt: null,
      }),
    ],
  });
  return { launch, user, code };
}
