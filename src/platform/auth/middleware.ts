import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { apiTokens } from "../../db/schema";
import type { AppEnv } from "../../env";
import { BoundedMap } from "../bounded-map";
import { ApiError } from "../errors";
import { enterInstitutionOfPath } from "../http/institution-path";
import { nowIso } from "../ids";
import { INSTITUTION_POLICY, USER_SHARE_POLICY } from "../ratelimit/lease-terms";
import { describeLimit } from "../ratelimit/middleware";
import { rateLimitHeaders } from "../ratelimit/window";
import { useDatabase, withPrincipal } from "../service/context";
import { enterInstitutionToWrite } from "../service/directory";
import type { Ability } from "./abilities";
import { decodeAdmitAnswer } from "./admit-answer";
import { countAuthFailure, refuseIfOverAuthFailureLimit } from "./auth-failures";
import { enforce, holdsAbility } from "./policy";
import type { Principal } from "./principal";
import type { TokenGate } from "./token-gate";
import { hashToken, looksLikeToken } from "./tokens";

declare module "hono" {
  interface ContextVariableMap {
    /** Who is calling: set by `authenticate` (below) on every token route, before its handler. */
    principal: Principal;
  }
}

const UNAUTHENTICATED_DETAIL = {
  missing: "Send an API token as `Authorization: Bearer <token>`.",
  malformed: "The bearer token is not a Lingua API token.",
  unknown: "The bearer token is not valid.",
  revoked: "The bearer token has been revoked.",
  expired: "The bearer token has expired.",
} as const;

function unauthenticated(reason: keyof typeof UNAUTHENTICATED_DETAIL): ApiError {
  const error =
    reason === "missing" ? 'Bearer realm="lingua"' : 'Bearer realm="lingua", error="invalid_token"';
  return new ApiError("unauthenticated", UNAUTHENTICATED_DETAIL[reason], {
    headers: { "WWW-Authenticate": error },
  });
}

/**
 * This isolate's copies of principals, by token hash. The token's Durable Object stays the authority
 * (it answers every request, so revocation and expiry are immediate); this only spares it from
 * sending the same principal back each time. Bounded: the oldest entry goes first.
 */
const principals = new BoundedMap<string, { version: number; principal: Principal }>(2_000);

/**
 * A token's hash and its Durable Object's id, by the token itself: both are pure functions of the
 * token, so an isolate works them out once per token rather than once per request.
 */
interface GateKey {
  tokenHash: string;
  gateId: DurableObjectId;
}
const gateKeys = new BoundedMap<string, GateKey>(2_000);
async function newGateKey(token: string, namespace: DurableObjectNamespace<TokenGate>): Promise<GateKey> {
  const tokenHash = await hashToken(token);
  return { tokenHash, gateId: namespace.idFromName(tokenHash) };
}

/**
 * Token → principal and rate decision in one Durable Object round trip. Sets the rate-limit headers
 * on whatever the route answers, errors included, and marks the response as not cacheable.
 */
export const authenticate = createMiddleware<AppEnv>(async function authenticate(c, next) {
  const header = c.req.header("Authorization");
  if (!header) throw unauthenticated("missing");
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  const token = match?.[1];
  if (!token) throw unauthenticated("malformed");
  const { headers } = await admitToken(c, token);
  await next();
  describeLimit(c, headers);
  // A route may let the caller's own cache keep its answer (`private`: institution analytics); no
  // shared cache ever stores an authenticated one.
  if (!c.res.headers.get("Cache-Control")?.startsWith("private"))
    c.res.headers.set("Cache-Control", "no-store");
});

/**
 * Admits one request of `token` — the bearer header's, or the dashboard's session cookie's (the
 * same session, the same revocation and limits) — through its TokenGate: sets `principal` and the
 * request's service context with it, and answers the rate-limit headers the response should carry.
 * Throws 401 `unauthenticated` (unknown, malformed, revoked, expired) or 429 `rate_limited`.
 */
export async function admitToken(
  c: Context<AppEnv>,
  token: string,
): Promise<{ principal: Principal; headers: Record<string, string> }> {
  if (!looksLikeToken(token)) throw unauthenticated("malformed");

  // A token this isolate has seen costs no hash and no await.
  const seen = gateKeys.get(token);
  if (!seen) refuseIfOverAuthFailureLimit(c);
  const gateKey = seen ?? (await newGateKey(token, c.env.TOKEN_GATE));
  const { tokenHash, gateId } = gateKey;
  const gate = c.env.TOKEN_GATE.get(gateId);
  const known = principals.get(tokenHash);
  const result = decodeAdmitAnswer(await gate.admit(tokenHash, known?.version, "compact"), known?.version);
  if (result.outcome === "unauthenticated") {
    principals.delete(tokenHash);
    gateKeys.delete(token);
    // Only unknown tokens look like guessing; an expired or revoked one is an integration's mistake,
    // and counting it would lock that address's new tokens out.
    if (result.reason === "unknown") await countAuthFailure(c);
    throw unauthenticated(result.reason);
  }
  // Remembered once admitted, so that guessed tokens never crowd out the keys of real ones.
  if (!seen) gateKeys.set(token, gateKey);

  if (result.outcome === "rate_limited") {
    const { rate, policy } = result;
    const limit = `${rate.limit} requests per ${rate.windowSeconds} seconds`;
    const what =
      policy === USER_SHARE_POLICY
        ? `All your tokens and sessions together may make ${limit}, your share of the institution's budget`
        : `${policy === INSTITUTION_POLICY ? "This institution's tokens together" : "This token"} may make ${limit}`;
    throw new ApiError("rate_limited", `${what}; retry after ${rate.retryAfterSeconds} s.`, {
      headers: rateLimitHeaders(rate, policy),
    });
  }
  const headers = rateLimitHeaders(result.rate, result.policy);

  const principal = result.principal ?? known?.principal;
  if (!principal) throw new Error("TokenGate sent no principal for an unknown version");
  if (result.principal) principals.set(tokenHash, { version: result.version, principal: result.principal });
  c.set("principal", principal);
  const ctx = withPrincipal(c.get("ctx"), principal);
  // The rest of the request runs in the database of the caller's institution.
  useDatabase(ctx, principal.database ?? "DB");
  c.set("ctx", ctx);
  if (principal.institution && !READS.has(c.req.method))
    await enterInstitutionToWrite(ctx, principal.institution.id);
  if (result.touch) {
    ctx.waitUntil(
      ctx.db
        .update(apiTokens)
        .set({ lastUsedAt: nowIso(ctx.now()) })
        .where(eq(apiTokens.id, principal.token.id))
        .run()
        .catch(() => undefined),
    );
  }
  // Platform staff (no institution of their own) acting on an institution by its path run in its
  // database (after the touch above, which is the token's, in DB).
  if (!principal.institution) await enterInstitutionOfPath(ctx, c.req.path);
  return { principal, headers };
}

/**
 * A write of an institution goes where the directory places it now, not where the principal was read
 * (the token gate's copy may predate a move), and is refused while a move switches it over.
 */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a token without `ability` (403 `missing_ability` naming it), unless `exempt` says this
 * request needs none (a token revoking itself: signing out needs no ability).
 */
export function requireAbility(ability: Ability, exempt?: (c: Context<AppEnv>) => boolean) {
  return createMiddleware<AppEnv>(async function requireAbility(c, next) {
    // The same refusal a domain's policy answers for a second ability (platform/auth/policy.ts).
    const decision = holdsAbility(c.var.principal, ability);
    if (!decision.allowed && !exempt?.(c)) enforce(decision);
    await next();
  });
}
