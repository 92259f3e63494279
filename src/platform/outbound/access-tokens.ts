import { and, eq, gt, lt, sql } from "drizzle-orm";
import { outboundAccessTokens } from "../../db/schema";
import { outboundAccessTokenBinding } from "../crypto/sealed-values";
import { seal, unseal } from "../crypto/sealing";
import type { ServiceContext } from "../service/context";

/**
 * The cache of OAuth 2 access tokens Lingua obtains from customers' authorisation servers, written
 * once for every caller (xAPI endpoints now, LTI platforms next): one row per holder and scope in
 * D1, so every isolate shares it, sealed and bound to holder, scope and the holder's credentials
 * version. How a token is obtained (client_secret_basic, a JWT assertion, …) is the caller's; when
 * to use, keep and forget one is here.
 *
 * - A token is used until EXPIRY_MARGIN_MS before the authorisation server said it expires.
 * - `version` is the holder's credentials version: raise it whenever the credentials change and a
 *   token of the old ones is never read again; the next request obtains one with the new ones.
 * - A token the resource server refused (401) is forgotten (`forgetAccessToken`), only if it is still
 *   the one cached, so a newer token another isolate stored meanwhile survives.
 */

/** A cached token is dropped this long before the authorisation server says it expires. */
export const EXPIRY_MARGIN_MS = 60_000;
/** The lifetime assumed when the token answer has no `expires_in`. */
export const DEFAULT_LIFETIME_SECONDS = 3_600;

export interface AccessTokenKey {
  /** The row whose credentials the token was obtained with, e.g. `xapi:<endpoint id>`. */
  holder: string;
  /** The scope asked for; "" when none. */
  scope: string;
  /** The holder's credentials version. */
  version: number;
}

/** A token and its sealed form as cached (the handle `forgetAccessToken` compares). */
export interface HeldToken {
  token: string;
  sealed: string;
  /** True when it was obtained for this call, false when it came from the cache. */
  fresh: boolean;
}

/** What the caller's token request came to: a token and its lifetime, or the caller's own failure. */
export type Obtained<F> = { token: string; expiresInSeconds: number | null } | { failure: F };

const where = (key: AccessTokenKey) =>
  and(
    eq(outboundAccessTokens.holder, key.holder),
    eq(outboundAccessTokens.scope, key.scope),
    eq(outboundAccessTokens.version, key.version),
  );

const binding = (key: AccessTokenKey) => outboundAccessTokenBinding(key.holder, key.scope, key.version);

/** When a token obtained at `now` that lives `expiresInSeconds` stops being used (ms). */
export function cachedUntil(now: number, expiresInSeconds: number | null): number {
  const lifetimeMs =
    (expiresInSeconds !== null && Number.isFinite(expiresInSeconds) && expiresInSeconds > 0
      ? expiresInSeconds
      : DEFAULT_LIFETIME_SECONDS) * 1000;
  // A short-lived token is kept for half its life rather than not at all.
  return now + Math.max(lifetimeMs - EXPIRY_MARGIN_MS, lifetimeMs / 2);
}

/** The cached token of `key` while it is still good, else null. */
export async function cachedAccessToken(ctx: ServiceContext, key: AccessTokenKey): Promise<HeldToken | null> {
  const row = await ctx.db
    .select({ tokenSealed: outboundAccessTokens.tokenSealed })
    .from(outboundAccessTokens)
    .where(and(where(key), gt(outboundAccessTokens.expiresAt, ctx.now())))
    .get();
  if (!row) return null;
  try {
    const token = await unseal(row.tokenSealed, ctx.config.encryptionKey, binding(key));
    return { token, sealed: row.tokenSealed, fresh: false };
  } catch {
    // Sealed under another key (ENCRYPTION_KEY rotated): as if there were none.
    return null;
  }
}

/**
 * Caches `token` for `key`. A row of a newer version (credentials changed while this token was being
 * obtained) is kept, and rows of the holder's older versions go.
 */
export async function storeAccessToken(
  ctx: ServiceContext,
  key: AccessTokenKey,
  token: string,
  expiresInSeconds: number | null,
): Promise<string> {
  const tokenSealed = await seal(token, ctx.config.encryptionKey, binding(key));
  const expiresAt = cachedUntil(ctx.now(), expiresInSeconds);
  const { db } = ctx;
  await db.batch([
    db
      .insert(outboundAccessTokens)
      .values({ ...key, tokenSealed, expiresAt })
      .onConflictDoUpdate({
        target: [outboundAccessTokens.holder, outboundAccessTokens.scope],
        set: { version: key.version, tokenSealed, expiresAt },
        setWhere: sql`${outboundAccessTokens.version} <= excluded.version`,
      }),
    db
      .delete(outboundAccessTokens)
      .where(and(eq(outboundAccessTokens.holder, key.holder), lt(outboundAccessTokens.version, key.version))),
  ]);
  return tokenSealed;
}

/** Forgets `held` (a token the resource server refused), unless another has replaced it meanwhile. */
export async function forgetAccessToken(
  ctx: ServiceContext,
  key: AccessTokenKey,
  held: Pick<HeldToken, "sealed">,
): Promise<void> {
  await ctx.db
    .delete(outboundAccessTokens)
    .where(and(where(key), eq(outboundAccessTokens.tokenSealed, held.sealed)))
    .run();
}

/** Every token of `holder` (its row is being deleted). */
export function forgetHolderTokens(ctx: ServiceContext, holder: string) {
  return ctx.db.delete(outboundAccessTokens).where(eq(outboundAccessTokens.holder, holder));
}

/**
 * The token of `key`: the cached one while it is good, else one `obtain` gets (then cached). A
 * failure of `obtain` is answered as it is and nothing is cached.
 */
export async function accessToken<F>(
  ctx: ServiceContext,
  key: AccessTokenKey,
  obtain: () => Promise<Obtained<F>>,
): Promise<HeldToken | { failure: F }> {
  const cached = await cachedAccessToken(ctx, key);
  if (cached) return cached;
  const obtained = await obtain();
  if ("failure" in obtained) return obtained;
  const sealed = await storeAccessToken(ctx, key, obtained.token, obtained.expiresInSeconds);
  return { token: obtained.token, sealed, fresh: true };
}
