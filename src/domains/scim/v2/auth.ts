import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { institutions, scimTokens } from "../../../db/schema";
import type { AppEnv } from "../../../env";
import { countAuthFailure, refuseIfOverAuthFailureLimit } from "../../../platform/auth/auth-failures";
import { rateLimitFor } from "../../../platform/auth/principal";
import { sha256Hex } from "../../../platform/crypto/encoding";
import { nowIso } from "../../../platform/ids";
import { describeLimit, limiterFor } from "../../../platform/ratelimit/middleware";
import { rateLimitHeaders } from "../../../platform/ratelimit/window";
import { enterInstitutionToWrite, findByDirectoryKey } from "../../../platform/service/directory";
import { ScimError } from "../errors";
import { scimBaseUrl } from "../present";
import { looksLikeScimToken } from "../tokens";
import type { ScimCaller } from "./resources";

declare module "hono" {
  interface ContextVariableMap {
    /** The institution a SCIM token speaks for: set by `authenticateScim` on every SCIM request. */
    scim: ScimCaller;
  }
}

/** `last_used_at` is written at most once a minute per token. */
const TOUCH_EVERY_MS = 60_000;

function unauthenticated(detail: string): ScimError {
  return new ScimError(401, detail, undefined, {
    "WWW-Authenticate": 'Bearer realm="lingua-scim", error="invalid_token"',
  });
}

/**
 * The SCIM service's own bearer authentication (not the API tokens' gate: a SCIM token has no user,
 * no abilities and no session). The token's SHA-256 is looked up in D1 on every request, so a
 * revocation holds from the next request on. Limited like the API: per token, per rolling minute,
 * the institution's plan's number (the Enterprise contract's own), counted in a RateLimiter object
 * with the same headers; unknown tokens count against the caller's address as the API's do.
 */
const SCIM_READS = new Set(["GET", "HEAD"]);

export const authenticateScim = createMiddleware<AppEnv>(async function authenticateScim(c, next) {
  const ctx = c.get("ctx");
  const header = c.req.header("Authorization");
  if (!header)
    throw new ScimError(401, "Send the SCIM token as `Authorization: Bearer <token>`.", undefined, {
      "WWW-Authenticate": 'Bearer realm="lingua-scim"',
    });
  const token = /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1];
  if (!token || !looksLikeScimToken(token))
    throw unauthenticated("The bearer token is not a Lingua SCIM token.");
  refuseIfOverAuthFailureLimit(c as Context<AppEnv>);
  // In DB, else in the database of the institution the token's directory key names (design/multi-database.md).
  const tokenHash = await sha256Hex(token);
  const found = await findByDirectoryKey(ctx, "scim_token", tokenHash, () =>
    ctx.db
      .select({
        id: scimTokens.id,
        institutionId: scimTokens.institutionId,
        revokedAt: scimTokens.revokedAt,
        lastUsedAt: scimTokens.lastUsedAt,
        plan: institutions.plan,
        rateLimitPerMinute: institutions.rateLimitPerMinute,
      })
      .from(scimTokens)
      .innerJoin(institutions, eq(institutions.id, scimTokens.institutionId))
      .where(eq(scimTokens.tokenHash, tokenHash))
      .get(),
  );
  if (!found) {
    await countAuthFailure(c as Context<AppEnv>);
    throw unauthenticated("The bearer token is not valid.");
  }
  if (found.revokedAt) throw unauthenticated("The SCIM token has been revoked.");
  // A write waits out a move's switch (503 with Retry-After, which identity providers retry).
  if (!SCIM_READS.has(c.req.method)) await enterInstitutionToWrite(ctx, found.institutionId);

  const limit = rateLimitFor("institution_admin", found);
  const decision = await limiterFor(ctx.env, `scim:${found.id}`).consume(
    limit,
    ctx.config.rateLimitWindowSeconds,
  );
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed)
    throw new ScimError(
      429,
      `This SCIM token may make ${limit} requests per ${decision.windowSeconds} seconds; retry after ${decision.retryAfterSeconds} s.`,
      undefined,
      headers,
    );

  const now = ctx.now();
  if (!found.lastUsedAt || found.lastUsedAt < nowIso(now - TOUCH_EVERY_MS)) {
    ctx.waitUntil(
      ctx.db
        .update(scimTokens)
        .set({ lastUsedAt: nowIso(now) })
        .where(
          and(
            eq(scimTokens.id, found.id),
            or(isNull(scimTokens.lastUsedAt), lt(scimTokens.lastUsedAt, nowIso(now))),
          ),
        )
        .run()
        .catch(() => undefined),
    );
  }
  c.set("scim", {
    institutionId: found.institutionId,
    tokenId: found.id,
    base: scimBaseUrl(new URL(c.req.url).origin),
  });
  await next();
  describeLimit(c, headers);
  c.res.headers.set("Cache-Control", "no-store");
});
