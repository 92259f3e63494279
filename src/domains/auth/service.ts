import { eq } from "drizzle-orm";
import { users } from "../../db/schema";
import type { Env } from "../../env";
import { config } from "../../platform/config";
import { sha256Hex } from "../../platform/crypto/encoding";
import {
  DECOY_PASSWORD_HASH,
  hashPassword,
  PBKDF2_ITERATIONS,
  parsePasswordHash,
  verifyPassword,
} from "../../platform/crypto/passwords";
import { database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { limiterFor, rateLimitedError } from "../../platform/ratelimit/middleware";
import { SIGN_IN_FAILURES } from "../../platform/ratelimit/policies";
import { insertToken } from "../tokens/service";

const SESSION_TOKEN_NAME = "Sign-in session";

/**
 * E-mail and password → a session token. An unknown e-mail verifies a decoy hash, so it costs the
 * same time as a wrong password and answers the same 401. Every attempt first takes a slot of the
 * e-mail's failure budget, so concurrent guesses cannot overshoot it; a successful one gives it back.
 */
export async function signIn(env: Env, email: string, password: string) {
  const normalisedEmail = email.trim().toLowerCase();
  const guard = limiterFor(env, `sign-in-email:${await sha256Hex(normalisedEmail)}`);
  const attempt = await guard.consume(SIGN_IN_FAILURES.limit, SIGN_IN_FAILURES.windowSeconds);
  if (!attempt.allowed)
    throw rateLimitedError(attempt, "failed sign-ins for this e-mail address", SIGN_IN_FAILURES.policy);

  const db = database(env.DB);
  const user = await db.select().from(users).where(eq(users.email, normalisedEmail)).get();
  const valid = await verifyPassword(password, user?.passwordHash ?? DECOY_PASSWORD_HASH);
  if (!user || !valid || user.status === "suspended")
    throw new ApiError("invalid_credentials", "The e-mail address or the password is wrong.");
  // Awaited, not deferred: the next attempt must already see the slot returned.
  await guard.refund(attempt.second);
  if ((parsePasswordHash(user.passwordHash)?.iterations ?? 0) < PBKDF2_ITERATIONS) {
    // A hash made with weaker parameters is upgraded the one time we hold the plain password.
    await db
      .update(users)
      .set({ passwordHash: await hashPassword(password) })
      .where(eq(users.id, user.id))
      .run();
  }

  return { ...(await createSession(env, user)), user };
}

/** A session token for a user who has just proved who they are (sign-in, accepted invitation). */
export async function createSession(env: Env, user: { id: string; institutionId: string | null }) {
  const ttlDays = config(env).sessionTtlDays;
  const expiresAt = nowIso(Date.now() + ttlDays * 86_400_000);
  const { row, plain } = await insertToken(
    env,
    { userId: user.id, institutionId: user.institutionId },
    {
      name: SESSION_TOKEN_NAME,
      abilities: ["*"],
      expiresAt,
      kind: "session",
    },
  );
  return { token: plain, tokenId: row.id, expiresAt };
}
