import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { apiTokens, type TokenKind } from "../../db/schema";
import { enforce } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";
import { mintToken } from "../../platform/auth/tokens";
import { ApiError, validationError } from "../../platform/errors";
import { type PageRequest, pageBounds } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../platform/service/context";
import { claimAll } from "../../platform/service/directory";
import { manageableTokens, mayGrant } from "./policy";
import {
  INSERT_API_TOKEN_UNDER_LIMIT_SQL,
  SURPLUS_SESSIONS_SQL,
  type SurplusSessionRow,
  TOKEN_PAGE_SQL,
  type TokenPageRow,
} from "./sql";

type TokenRow = typeof apiTokens.$inferSelect;

function manageableBy(principal: Principal): SQL {
  const scope = manageableTokens(principal);
  const ownerColumn = scope.owner === "institution_id" ? apiTokens.institutionId : apiTokens.userId;
  return sql`${apiTokens.revokedAt} IS NULL AND ${ownerColumn} = ${scope.id}`;
}

/**
 * A page of the tokens the caller manages (`manageableTokens`), newest first, ties by id: the
 * total and the page's items as a JSON array text in the wire shape, ready to be sent as is.
 */
export async function listTokens(ctx: PrincipalContext, input: { page: PageRequest; kind?: TokenKind }) {
  const { limit, offset } = pageBounds(input.page);
  const scope = manageableTokens(ctx.principal);
  const statement = ctx.d1.prepare(TOKEN_PAGE_SQL[scope.owner][input.kind ? "byKind" : "all"]);
  const row = await (input.kind
    ? statement.bind(scope.id, limit, offset, input.kind)
    : statement.bind(scope.id, limit, offset)
  ).first<TokenPageRow>();
  return { total: row?.total ?? 0, dataJson: row?.data ?? "[]" };
}

export interface NewToken {
  owner: { userId: string; institutionId: string | null };
  name: string;
  abilities: string[];
  expiresAt: string | null;
  kind: TokenKind;
}

/** Active API tokens a user may hold; the next one answers 409 `token_limit_reached`. */
export const API_TOKEN_LIMIT = 100;
/** Live sessions a user may hold; signing in again retires the oldest. */
export const SESSION_LIMIT = 20;

function newTokenRow(
  token: NewToken,
  minted: { hash: string; displayPrefix: string },
  now: number,
): TokenRow {
  return {
    id: newId("tok"),
    userId: token.owner.userId,
    institutionId: token.owner.institutionId,
    kind: token.kind,
    name: token.name,
    tokenHash: minted.hash,
    prefix: minted.displayPrefix,
    abilities: token.abilities,
    createdAt: nowIso(now),
    lastUsedAt: null,
    expiresAt: token.expiresAt,
    revokedAt: null,
  };
}

/**
 * Inserts a token; the plain value exists only in the return value. An API token only while the
 * owner holds fewer than API_TOKEN_LIMIT; a session retires the owner's oldest beyond SESSION_LIMIT.
 * Sign-in, invitations and LTI launches issue their sessions through this.
 */
export async function insertToken(ctx: ServiceContext, token: NewToken) {
  const minted = await mintToken();
  const row = newTokenRow(token, minted, ctx.now());
  // A token of an institution in another database than DB is found through its directory key,
  // claimed first (design/multi-database.md; nothing to claim in DB); a key whose insert below
  // fails leads to nothing.
  if (row.institutionId)
    await claimAll(ctx, [
      {
        kind: "token",
        key: row.tokenHash,
        institutionId: row.institutionId,
        constraint: "api_tokens.token_hash",
      },
    ]);
  if (token.kind === "api") {
    const inserted = await ctx.d1
      .prepare(INSERT_API_TOKEN_UNDER_LIMIT_SQL)
      .bind(
        row.id,
        row.userId,
        row.institutionId,
        row.name,
        row.tokenHash,
        row.prefix,
        JSON.stringify(row.abilities),
        row.createdAt,
        row.expiresAt,
        API_TOKEN_LIMIT,
      )
      .run();
    if (inserted.meta.changes === 0) {
      throw new ApiError(
        "token_limit_reached",
        `A user may hold at most ${API_TOKEN_LIMIT} active API tokens; revoke one you no longer use.`,
      );
    }
  } else {
    await ctx.db.insert(apiTokens).values(row).run();
    await retireSurplusSessions(ctx, token.owner.userId);
  }
  return { row, plain: minted.plain };
}

/**
 * Revokes the user's sessions beyond the newest SESSION_LIMIT. Concurrent sign-ins each retire
 * what they see beyond the limit, so together they never leave more than SESSION_LIMIT live.
 */
async function retireSurplusSessions(ctx: ServiceContext, userId: string): Promise<void> {
  const { results } = await ctx.d1
    .prepare(SURPLUS_SESSIONS_SQL)
    .bind(userId, nowIso(ctx.now()), SESSION_LIMIT)
    .all<SurplusSessionRow>();
  for (const surplus of results) await revokeRow(ctx, { id: surplus.id, tokenHash: surplus.token_hash });
}

/** Pushes the revocation to the token's gate first, so the very next request is refused. */
async function revokeRow(ctx: ServiceContext, row: { id: string; tokenHash: string }): Promise<void> {
  const gates = ctx.env.TOKEN_GATE;
  await gates.get(gates.idFromName(row.tokenHash)).revoke();
  await ctx.db
    .update(apiTokens)
    .set({ revokedAt: nowIso(ctx.now()) })
    .where(and(eq(apiTokens.id, row.id), isNull(apiTokens.revokedAt)))
    .run();
}

/** An API token for the caller, within what `mayGrant` allows. */
export async function createApiToken(
  ctx: PrincipalContext,
  input: { name: string; abilities: string[]; expires_at?: string | null },
) {
  enforce(mayGrant(ctx.principal, input.abilities));
  let expiresAt: string | null = null;
  if (input.expires_at) {
    const when = Date.parse(input.expires_at);
    if (when <= ctx.now()) throw validationError([{ path: "expires_at", message: "must be in the future" }]);
    expiresAt = nowIso(when);
  }
  const { principal } = ctx;
  return insertToken(ctx, {
    owner: { userId: principal.user.id, institutionId: principal.institution?.id ?? null },
    name: input.name,
    abilities: [...new Set(input.abilities)],
    expiresAt,
    kind: "api",
  });
}

/**
 * Revocation is pushed to the token's Durable Object first, so the very next request is refused even
 * if the D1 write below fails (the caller then retries the DELETE, which is safe). A token the
 * caller does not manage answers 404.
 */
export async function revokeToken(ctx: PrincipalContext, tokenId: string): Promise<void> {
  const row = await ctx.db
    .select({ id: apiTokens.id, tokenHash: apiTokens.tokenHash })
    .from(apiTokens)
    .where(and(eq(apiTokens.id, tokenId), manageableBy(ctx.principal)))
    .get();
  if (!row) throw new ApiError("not_found", `No token ${tokenId}.`);
  await revokeRow(ctx, row);
}
