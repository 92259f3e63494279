import { eq } from "drizzle-orm";
import { users } from "../../db/schema";
import { sha256Hex } from "../../platform/crypto/encoding";
import {
  DECOY_PASSWORD_HASH,
  hashPassword,
  PBKDF2_ITERATIONS,
  parsePasswordHash,
  verifyPassword,
} from "../../platform/crypto/passwords";
import { ApiError } from "../../platform/errors";
import { nowIso } from "../../platform/ids";
import { limiterFor, rateLimitedError } from "../../platform/ratelimit/middleware";
import { SIGN_IN_FAILURES } from "../../platform/ratelimit/policies";
import type { ServiceContext } from "../../platform/service/context";
import {
  enterInstitutionToWrite,
  institutionDatabase,
  institutionOfKey,
  useInstitutionDatabase,
} from "../../platform/service/directory";
import { enforcedSsoFor } from "../institutions/sso/service";
import { insertToken } from "../tokens/service";
import { keepsPasswordUnderEnforcedSso } from "./policy";

const SESSION_TOKEN_NAME = "Sign-in session";

/** The RateLimiter keys that count failed sign-ins (exported for the tests that fill them). */
export async function signInFailureKeys(email: string, clientAddress: string) {
  const normalisedEmail = email.trim().toLowerCase();
  return {
    pair: `sign-in-failures:${await sha256Hex(`${normalisedEmail}\n${clientAddress}`)}`,
    address: `sign-in-address-failures:${clientAddress}`,
  };
}

/**
 * Takes a slot of both failure budgets before the password is checked, so that concurrent guesses
 * cannot overshoot them; a success gives the address's slot back and resets the pair. A blocked
 * pair or address is refused whatever the password, before any hashing.
 */
async function claimFailureSlots(ctx: ServiceContext, email: string, clientAddress: string) {
  const keys = await signInFailureKeys(email, clientAddress);
  const pair = limiterFor(ctx.env, keys.pair);
  const address = limiterFor(ctx.env, keys.address);
  const { pair: pairPolicy, address: addressPolicy } = SIGN_IN_FAILURES;
  const [pairSlot, addressSlot] = await Promise.all([
    pair.consume(pairPolicy.limit, pairPolicy.windowSeconds),
    address.consume(addressPolicy.limit, addressPolicy.windowSeconds),
  ]);
  if (!pairSlot.allowed || !addressSlot.allowed) {
    // A slot taken by a refused attempt is no failure: give it back.
    await Promise.all([
      pairSlot.allowed ? pair.refund(pairSlot.second) : undefined,
      addressSlot.allowed ? address.refund(addressSlot.second) : undefined,
    ]);
    throw pairSlot.allowed
      ? rateLimitedError(addressSlot, "failed sign-ins from this address", addressPolicy.policy)
      : rateLimitedError(
          pairSlot,
          "failed sign-ins for this e-mail address from this address",
          pairPolicy.policy,
        );
  }
  return {
    /** Awaited, not deferred: the next attempt must already see the slots returned. */
    succeeded: () => Promise.all([pair.reset(), address.refund(addressSlot.second)]),
  };
}

/**
 * An address whose domain an institution routes through enforced SSO signs in there, not with a
 * password: 403 `sso_required` with the URL to start from, before any password is looked at (so it
 * costs no failure slot and says nothing of the password). Platform staff and the break-glass admin
 * keep their passwords.
 */
async function refuseIfSsoRequired(ctx: ServiceContext, email: string, origin: string): Promise<void> {
  const enforced = await enforcedSsoFor(ctx, email);
  if (!enforced) return;
  const read = (db: ServiceContext["db"]) =>
    db
      .select({ id: users.id, role: users.role, institutionId: users.institutionId })
      .from(users)
      .where(eq(users.email, email))
      .get();
  // Platform staff are in DB; a member of an institution outside DB where it lives (its break-glass admin).
  const user =
    (await read(ctx.db)) ?? (await read((await institutionDatabase(ctx, enforced.institutionId)).db));
  if (keepsPasswordUnderEnforcedSso(user, enforced)) return;
  const ssoUrl = `${origin}/api/auth/sso?email=${encodeURIComponent(email)}`;
  throw new ApiError(
    "sso_required",
    "This institution signs its members in through its identity provider: continue at sso_url.",
    { extensions: { sso_url: ssoUrl } },
  );
}

/**
 * E-mail and password → a session token. An unknown e-mail verifies a decoy hash, so it costs the
 * same time as a wrong password and answers the same 401. Failures are counted per (e-mail,
 * address) and per address (see SIGN_IN_FAILURES), never per e-mail alone: a correct password from
 * an address that has not failed for that e-mail always signs in.
 */
export async function signIn(
  ctx: ServiceContext,
  {
    email,
    password,
    clientAddress,
    origin,
  }: { email: string; password: string; clientAddress: string; origin: string },
) {
  const normalisedEmail = email.trim().toLowerCase();
  const { db } = ctx;
  await refuseIfSsoRequired(ctx, normalisedEmail, origin);
  const slots = await claimFailureSlots(ctx, normalisedEmail, clientAddress);

  const user = await findByEmail(ctx, normalisedEmail);
  const valid = await verifyPassword(password, user?.passwordHash ?? DECOY_PASSWORD_HASH);
  if (!user || !valid || user.status === "suspended")
    throw new ApiError("invalid_credentials", "The e-mail address or the password is wrong.");
  await slots.succeeded();
  if ((parsePasswordHash(user.passwordHash)?.iterations ?? 0) < PBKDF2_ITERATIONS) {
    // A hash made with weaker parameters is upgraded the one time we hold the plain password.
    await db
      .update(users)
      .set({ passwordHash: await hashPassword(password) })
      .where(eq(users.id, user.id))
      .run();
  }

  return { ...(await createSession(ctx, user)), user };
}

/**
 * The user with this e-mail: in DB, or in the database of the institution its directory key names
 * (design/multi-database.md), where the invocation then carries on.
 */
async function findByEmail(ctx: ServiceContext, email: string) {
  const inFirst = await ctx.db.select().from(users).where(eq(users.email, email)).get();
  if (inFirst) return inFirst;
  const institutionId = await institutionOfKey(ctx, "email", email);
  if (!institutionId) return undefined;
  await useInstitutionDatabase(ctx, institutionId);
  return ctx.db.select().from(users).where(eq(users.email, email)).get();
}

/** A session token for a user who has just proved who they are (sign-in, accepted invitation). */
export async function createSession(ctx: ServiceContext, user: { id: string; institutionId: string | null }) {
  // Written where the member's institution lives now; refused while a move switches it over.
  if (user.institutionId) await enterInstitutionToWrite(ctx, user.institutionId);
  const expiresAt = nowIso(ctx.now() + ctx.config.sessionTtlDays * 86_400_000);
  const { row, plain } = await insertToken(ctx, {
    owner: { userId: user.id, institutionId: user.institutionId },
    name: SESSION_TOKEN_NAME,
    abilities: ["*"],
    expiresAt,
    kind: "session",
  });
  return { token: plain, tokenId: row.id, expiresAt };
}
