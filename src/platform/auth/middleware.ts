import { eq } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { apiTokens } from "../../db/schema";
import type { AppEnv } from "../../env";
import { database } from "../db";
import { ApiError } from "../errors";
import { nowIso } from "../ids";
import { rateLimitHeaders } from "../ratelimit/window";
import type { Ability } from "./abilities";
import type { Principal } from "./principal";
import { hashToken, looksLikeToken } from "./tokens";

const UNAUTHENTICATED_DETAIL = {
  missing: "Send an API token as `Authorization: Bearer <token>`.",
  malformed: "The bearer token is not a Lingua API token.",
  unknown: "The bearer token is not valid.",
  revoked: "The bearer token has been revoked.",
  expired: "The bearer token has expired.",
} as const;

function unauthenticated(reason: keyof typeof UNAUTHENTICATED_DETAIL): ApiError {
  const error = reason === "missing" ? 'Bearer realm="lingua"' : 'Bearer realm="lingua", error="invalid_token"';
  return new ApiError("unauthenticated", UNAUTHENTICATED_DETAIL[reason], { headers: { "WWW-Authenticate": error } });
}

/**
 * This isolate's copies of principals, by token hash. The token's Durable Object stays the authority
 * (it answers every request, so revocation and expiry are immediate); this only spares it from
 * sending the same principal back each time. Bounded: the oldest entry goes first.
 */
class PrincipalCache {
  private readonly entries = new Map<string, { version: number; principal: Principal }>();
  constructor(private readonly capacity: number) {}
  get(hash: string) {
    return this.entries.get(hash);
  }
  set(hash: string, entry: { version: number; principal: Principal }) {
    this.entries.delete(hash);
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, entry);
  }
  delete(hash: string) {
    this.entries.delete(hash);
  }
}
const principals = new PrincipalCache(2_000);

/**
 * Token → principal and rate decision in one Durable Object round trip. Sets the rate-limit headers
 * on whatever the route answers, errors included, and marks the response as not cacheable.
 */
export const authenticate = createMiddleware<AppEnv>(async function authenticate(c, next) {
  const header = c.req.header("Authorization");
  if (!header) throw unauthenticated("missing");
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match || !looksLikeToken(match[1]!)) throw unauthenticated("malformed");

  const tokenHash = await hashToken(match[1]!);
  const gate = c.env.TOKEN_GATE.get(c.env.TOKEN_GATE.idFromName(tokenHash));
  const known = principals.get(tokenHash);
  const result = await gate.admit(tokenHash, known?.version);
  if (result.outcome === "unauthenticated") {
    principals.delete(tokenHash);
    throw unauthenticated(result.reason);
  }

  const headers = rateLimitHeaders(result.rate);
  if (result.outcome === "rate_limited") {
    throw new ApiError(
      "rate_limited",
      `This token may make ${result.rate.limit} requests per ${result.rate.windowSeconds} seconds; retry after ${result.rate.retryAfterSeconds} s.`,
      { headers },
    );
  }

  const principal = result.principal ?? known?.principal;
  if (!principal) throw new Error("TokenGate sent no principal for an unknown version");
  if (result.principal) principals.set(tokenHash, { version: result.version, principal: result.principal });
  c.set("principal", principal);
  if (result.touch) {
    const db = database(c.env.DB);
    c.executionCtx.waitUntil(
      db.update(apiTokens).set({ lastUsedAt: nowIso() }).where(eq(apiTokens.id, principal.token.id)).run().catch(() => undefined),
    );
  }
  await next();
  for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  c.res.headers.set("Cache-Control", "no-store");
});

export function requireAbility(ability: Ability) {
  return createMiddleware<AppEnv>(async function requireAbility(c, next) {
    if (!c.var.principal.token.abilities.includes(ability)) {
      throw new ApiError("missing_ability", `This token lacks the \`${ability}\` ability.`);
    }
    await next();
  });
}
