import { and, eq, ne } from "drizzle-orm";
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from "jose";
import { ltiConsumers, ltiStates } from "../../../db/schema";
import { redeemOnce } from "../../../platform/auth/single-use";
import type { ServiceContext } from "../../../platform/service/context";
import { enterInstitutionToWrite } from "../../../platform/service/directory";
import { CLAIMS } from "../claims";
import { type ConsumerRow, registrationAnywhere } from "../registrations/service";
import { checkLtiClaims } from "./claims-check";
import { registrationOfState, warnAmbiguous } from "./login";
import { JwksUnavailable, platformKeysFor } from "./platform-key-set";
import { checkStorageBinding, type StorageCheck } from "./platform-storage";
import { LaunchRefusal } from "./refusal";

/** Seconds of clock difference accepted on `exp` and `iat`. */
const CLOCK_SKEW_SECONDS = 60;

/** A launch callback as it arrived: the platform's form post and where it was posted. */
export interface LaunchCallback {
  form: { id_token?: string; state?: string; error?: string; error_description?: string };
  /** The browser's state cookie of a `state`, if it sent one. */
  stateCookie: (state: string) => string | undefined;
  /** The platform-storage check the callback's storage page posted, if any (launch/platform-storage.ts). */
  storage?: StorageCheck;
  /** This API's origin: the launch URL the id_token must name is on it. */
  origin: string;
  /** The registration whose own callback was posted to; none: the shared callback. */
  registrationId?: string;
}

export interface ValidLaunch {
  consumer: ConsumerRow;
  claims: JWTPayload & Record<string, unknown>;
}

type StateRow = typeof ltiStates.$inferSelect;

/**
 * Which states a callback redeems: a registration's own callback (`/api/lti/callback/{id}`) only the
 * states of logins through that registration's own login URL; the shared callback only those of the
 * shared login. The platform posts to the redirect URI the login named, so a state posted elsewhere
 * was carried there by someone else.
 */
function bindingOf(registrationId: string | undefined) {
  return registrationId === undefined
    ? eq(ltiStates.registrationBound, false)
    : and(eq(ltiStates.consumerId, registrationId), eq(ltiStates.registrationBound, true));
}

function boundHere(row: StateRow, registrationId: string | undefined): boolean {
  return registrationId === undefined
    ? !row.registrationBound
    : row.registrationBound && row.consumerId === registrationId;
}

/**
 * Takes the state for this callback (single use): the unused, unexpired row issued for this callback,
 * or a refusal saying which it was not. A state posted to another callback is not spent.
 */
async function consumeState(
  ctx: ServiceContext,
  state: string,
  now: number,
  registrationId: string | undefined,
): Promise<{ row: StateRow; consumer: ConsumerRow }> {
  const { db } = ctx;
  const redeemed = await redeemOnce(db, ltiStates, {
    key: eq(ltiStates.state, state),
    scope: bindingOf(registrationId),
    now,
  });
  const taken = redeemed.outcome === "taken" ? redeemed.row : null;
  const row = redeemed.row;
  const consumer = row
    ? ((await db.select().from(ltiConsumers).where(eq(ltiConsumers.id, row.consumerId)).get()) ?? null)
    : null;
  if (!row || !consumer)
    throw new LaunchRefusal(
      "state_unknown",
      "The `state` is not one this tool issued; start the launch from the platform again.",
    );
  // Logged without a registration: the log entry would tell this callback's institution of another's login.
  if (!boundHere(row, registrationId))
    throw new LaunchRefusal(
      "state_wrong_callback",
      "The `state` was issued for another callback URL: the platform posts the launch to the redirect URI the login named; check the registration's `tool.redirect_uris` in the platform.",
    );
  if (!taken && row.usedAt !== null)
    throw new LaunchRefusal(
      "state_used",
      "The `state` was used already; each login allows one launch.",
      consumer,
    );
  if (!taken)
    throw new LaunchRefusal("state_expired", "The `state` expired (10 minutes after the login).", consumer);
  return { row, consumer };
}

function claimsError(error: unknown, consumer: ConsumerRow): LaunchRefusal {
  if (error instanceof joseErrors.JWSSignatureVerificationFailed)
    return new LaunchRefusal(
      "signature_invalid",
      "The id_token's signature does not verify with the platform's key.",
      consumer,
    );
  if (error instanceof joseErrors.JWTExpired)
    return new LaunchRefusal(
      "token_expired",
      "The id_token has expired (`exp`, 60 seconds of clock skew allowed).",
      consumer,
    );
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === "iss")
      return new LaunchRefusal(
        "issuer_mismatch",
        `The id_token's \`iss\` is not the registration's issuer ${consumer.issuer}.`,
        consumer,
      );
    if (error.claim === "aud")
      return new LaunchRefusal(
        "audience_mismatch",
        `The id_token's \`aud\` does not contain the client id ${consumer.clientId}.`,
        consumer,
      );
    return new LaunchRefusal(
      "claim_invalid",
      `The id_token's \`${error.claim}\` claim is invalid: ${error.message}.`,
      consumer,
    );
  }
  return new LaunchRefusal(
    "id_token_malformed",
    `The id_token could not be read: ${String(error)}.`,
    consumer,
  );
}

/** Header checks before any key is looked at: the algorithm is RS256 whatever the header claims, and a kid is named. */
function checkHeader(idToken: string, consumer: ConsumerRow): string {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(idToken);
  } catch {
    throw new LaunchRefusal("id_token_malformed", "The id_token is not a signed JWT.", consumer);
  }
  if (header.alg !== "RS256")
    throw new LaunchRefusal(
      "alg_not_allowed",
      `The id_token is signed with \`${String(header.alg)}\`; only RS256 is accepted.`,
      consumer,
    );
  if (typeof header.kid !== "string" || !header.kid)
    throw new LaunchRefusal("kid_unknown", "The id_token's header names no `kid`.", consumer);
  return header.kid;
}

/** Signature, issuer, audience and times, by jose with RS256 only; then `azp` and `iat`. */
async function verifyToken(ctx: ServiceContext, idToken: string, consumer: ConsumerRow, now: number) {
  const kid = checkHeader(idToken, consumer);
  let jwks: Awaited<ReturnType<typeof platformKeysFor>>;
  try {
    jwks = await platformKeysFor(ctx, { consumer, kid });
  } catch (error) {
    if (error instanceof JwksUnavailable)
      throw new LaunchRefusal("jwks_unavailable", error.message, consumer, true);
    throw error;
  }
  if (!jwks)
    throw new LaunchRefusal("kid_unknown", `The platform's key set has no key \`${kid}\`.`, consumer);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
      algorithms: ["RS256"],
      issuer: consumer.issuer,
      audience: consumer.clientId,
      clockTolerance: CLOCK_SKEW_SECONDS,
      requiredClaims: ["exp", "iat"],
      currentDate: new Date(now),
    }));
  } catch (error) {
    throw claimsError(error, consumer);
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if ((audiences.length > 1 || payload.azp !== undefined) && payload.azp !== consumer.clientId)
    throw new LaunchRefusal(
      "azp_mismatch",
      `The id_token's \`azp\` must be the client id ${consumer.clientId}.`,
      consumer,
    );
  if (typeof payload.iat !== "number" || payload.iat > now / 1000 + CLOCK_SKEW_SECONDS)
    throw new LaunchRefusal("token_not_yet_valid", "The id_token's `iat` is in the future.", consumer);
  return payload as JWTPayload & Record<string, unknown>;
}

/**
 * After a login through the shared URL (which chose the registration by issuer, client id and the
 * deployment id the browser carried), the launch's deployment must belong to the state's registration
 * alone: when another registration of the same issuer and client id (another institution's) lists it
 * too, the login may have been steered and the launch is refused, logged, without saying whose — so
 * that no institution receives a launch of a deployment another one also claims.
 *
 * Not run after a login through a registration's own URL: that login named the registration's own
 * redirect URI, which the platform answers only when it was configured with it, and only that
 * registration's callback redeems its state; so the platform's configuration, not the order of
 * registration, binds the launch, and another registration listing the deployment neither blocks nor
 * receives it.
 */
async function checkUnambiguous(
  ctx: ServiceContext,
  consumer: ConsumerRow,
  deployment: string,
): Promise<void> {
  const others = (
    await ctx.db
      .select()
      .from(ltiConsumers)
      .where(
        and(
          eq(ltiConsumers.issuer, consumer.issuer),
          eq(ltiConsumers.clientId, consumer.clientId),
          ne(ltiConsumers.id, consumer.id),
        ),
      )
  ).filter((row) => row.deploymentIds.includes(deployment));
  if (others.length === 0) return;
  warnAmbiguous("launch", {
    issuer: consumer.issuer,
    clientId: consumer.clientId,
    deploymentId: deployment,
    registrations: [consumer, ...others],
  });
  throw new LaunchRefusal(
    "registration_ambiguous",
    `The deployment ${deployment} of this platform is listed by more than one registration; each registration must list only the deployment ids it serves, or the platform must use the registration's own \`tool.login_url\` and \`tool.redirect_uris\`.`,
  );
}

/**
 * Every check of a launch callback, in the order of the LTI 1.3 security framework; the first that
 * fails throws a LaunchRefusal naming it. `registrationId`: the registration whose own callback was
 * posted to (none: the shared callback).
 */
export async function validateLaunch(ctx: ServiceContext, input: LaunchCallback): Promise<ValidLaunch> {
  const { form, stateCookie, origin, registrationId } = input;
  const now = ctx.now();
  const platformError = (consumer: ConsumerRow | null) =>
    new LaunchRefusal(
      "platform_error",
      `The platform answered \`${form.error}\`${form.error_description ? `: ${form.error_description}` : ""}.`,
      consumer,
    );
  if (!form.state) {
    if (form.error) throw platformError(null);
    throw new LaunchRefusal("state_unknown", "The callback carries no `state`.");
  }
  // Where the registration lives: its own callback's id, else the one the state names.
  const named = registrationId ?? registrationOfState(form.state);
  const registration = named ? await registrationAnywhere(ctx, named) : undefined;
  // The state is spent and the launch written there: refused while a move switches the institution.
  if (registration) await enterInstitutionToWrite(ctx, registration.institutionId);
  const { row: state, consumer } = await consumeState(ctx, form.state, now, registrationId);
  const cookie = stateCookie(form.state);
  if (cookie !== undefined && cookie !== state.browserBinding)
    throw new LaunchRefusal(
      "state_cookie_mismatch",
      "The browser's state cookie does not match this `state`.",
      consumer,
    );
  if (form.error) throw platformError(consumer);
  // Bound to the browser that started the login: by its cookie, else by the platform's storage.
  if (cookie === undefined) checkStorageBinding(input.storage, state, consumer);
  if (!form.id_token)
    throw new LaunchRefusal("id_token_missing", "The callback carries no `id_token`.", consumer);
  const claims = await verifyToken(ctx, form.id_token, consumer, now);
  checkLtiClaims(claims, state.nonce, consumer, origin, ctx.config.outbound.allowLoopback);
  if (!state.registrationBound) await checkUnambiguous(ctx, consumer, claims[CLAIMS.deploymentId] as string);
  return { consumer, claims };
}
