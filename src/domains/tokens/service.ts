import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { apiTokens, type TokenKind } from "../../db/schema";
import type { Env } from "../../env";
import { type Ability, abilitiesBeyondRole, effectiveAbilities } from "../../platform/auth/abilities";
import type { Principal } from "../../platform/auth/principal";
import { mintToken } from "../../platform/auth/tokens";
import { database } from "../../platform/db";
import { ApiError, validationError } from "../../platform/errors";
import { type PageRequest, pageBounds } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";

type TokenRow = typeof apiTokens.$inferSelect;

/**
 * Which tokens a principal manages: an institution admin every active token of its institution,
 * everybody else their own. Anything outside this scope answers 404. The list reads it as plain SQL
 * (`owner` names the column), revocation through drizzle (`manageableBy`).
 */
function tokenScope(principal: Principal): { owner: "institution_id" | "user_id"; id: string } {
  return principal.user.role === "institution_admin" && principal.institution
    ? { owner: "institution_id", id: principal.institution.id }
    : { owner: "user_id", id: principal.user.id };
}

function manageableBy(principal: Principal): SQL {
  const scope = tokenScope(principal);
  const ownerColumn = scope.owner === "institution_id" ? apiTokens.institutionId : apiTokens.userId;
  return sql`${apiTokens.revokedAt} IS NULL AND ${ownerColumn} = ${scope.id}`;
}

// The one list that does not use `pageWithTotal` (platform/http/pagination): it is on the bench's hot
// path, measured faster this way. New lists use `pageWithTotal`; do not copy this.
// The token list as SQLite writes it: one row with the total and the page as a JSON array whose
// objects have the wire shape of `presentToken` (same keys, same order), so D1 hands back two values
// instead of a row per token and nothing maps or re-serialises the rows in the worker. Scope:
// ?1 the institution (admins) or the user (everybody else), then ?2 limit, ?3 offset[, ?4 kind].
// The inner ORDER BY picks the page; the aggregate's own ORDER BY fixes the array's order.
const TOKEN_JSON = `json_object('id', id, 'name', name, 'kind', kind, 'abilities', json(abilities), 'prefix', prefix,
  'user_id', user_id, 'created_at', created_at, 'last_used_at', last_used_at, 'expires_at', expires_at)`;
function tokenPageSql(owner: "institution_id" | "user_id", byKind: boolean): string {
  const where = `${owner} = ?1 AND revoked_at IS NULL${byKind ? " AND kind = ?4" : ""}`;
  return `SELECT (SELECT count(*) FROM api_tokens WHERE ${where}) AS total,
  (SELECT json_group_array(${TOKEN_JSON} ORDER BY created_at DESC, id DESC) FROM
    (SELECT * FROM api_tokens WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3)) AS data`;
}
const TOKEN_PAGE_SQL = {
  institution_id: {
    all: tokenPageSql("institution_id", false),
    byKind: tokenPageSql("institution_id", true),
  },
  user_id: { all: tokenPageSql("user_id", false), byKind: tokenPageSql("user_id", true) },
};

/**
 * A page of the tokens `principal` manages (see `tokenScope`), newest first, ties by id: the
 * total and the page's items as a JSON array text in the wire shape, ready to be sent as is.
 */
export async function listTokens({
  env,
  principal,
  page,
  kind,
}: {
  env: Env;
  principal: Principal;
  page: PageRequest;
  kind?: TokenKind;
}) {
  const { limit, offset } = pageBounds(page);
  const scope = tokenScope(principal);
  const statement = env.DB.prepare(TOKEN_PAGE_SQL[scope.owner][kind ? "byKind" : "all"]);
  const row = await (kind
    ? statement.bind(scope.id, limit, offset, kind)
    : statement.bind(scope.id, limit, offset)
  ).first<{ total: number; data: string }>();
  return { total: row?.total ?? 0, dataJson: row?.data ?? "[]" };
}

export interface CreateTokenInput {
  name: string;
  abilities: string[];
  expiresAt: string | null;
  kind: TokenKind;
}

/** Active API tokens a user may hold; the next one answers 409 `token_limit_reached`. */
export const API_TOKEN_LIMIT = 100;
/** Live sessions a user may hold; signing in again retires the oldest. */
export const SESSION_LIMIT = 20;

// The insert and the count of the owner's live API tokens are one statement, which D1 runs alone:
// concurrent creations cannot both see room for the last token.
const INSERT_API_TOKEN_UNDER_LIMIT_SQL = `INSERT INTO api_tokens
  (id, user_id, institution_id, kind, name, token_hash, prefix, abilities, created_at, expires_at)
  SELECT ?1, ?2, ?3, 'api', ?4, ?5, ?6, ?7, ?8, ?9
  WHERE (SELECT count(*) FROM api_tokens WHERE user_id = ?2 AND kind = 'api' AND revoked_at IS NULL
    AND (expires_at IS NULL OR expires_at > ?8)) < ?10`;

/** A user's live sessions beyond the newest SESSION_LIMIT, oldest last. */
const SURPLUS_SESSIONS_SQL = `SELECT id, token_hash FROM api_tokens
  WHERE user_id = ?1 AND kind = 'session' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)
  ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?3`;

function newTokenRow(
  owner: { userId: string; institutionId: string | null },
  input: CreateTokenInput,
  minted: { hash: string; displayPrefix: string },
): TokenRow {
  return {
    id: newId("tok"),
    userId: owner.userId,
    institutionId: owner.institutionId,
    kind: input.kind,
    name: input.name,
    tokenHash: minted.hash,
    prefix: minted.displayPrefix,
    abilities: input.abilities,
    createdAt: nowIso(),
    lastUsedAt: null,
    expiresAt: input.expiresAt,
    revokedAt: null,
  };
}

/**
 * Inserts a token for `owner`; the plain value exists only in the return value. An API token only
 * while the owner holds fewer than API_TOKEN_LIMIT; a session retires the owner's oldest beyond
 * SESSION_LIMIT.
 */
export async function insertToken(
  env: Env,
  owner: { userId: string; institutionId: string | null },
  input: CreateTokenInput,
) {
  const minted = await mintToken();
  const row = newTokenRow(owner, input, minted);
  if (input.kind === "api") {
    const inserted = await env.DB.prepare(INSERT_API_TOKEN_UNDER_LIMIT_SQL)
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
    await database(env.DB).insert(apiTokens).values(row).run();
    await retireSurplusSessions(env, owner.userId);
  }
  return { row, plain: minted.plain };
}

/**
 * Revokes the user's sessions beyond the newest SESSION_LIMIT. Concurrent sign-ins each retire
 * what they see beyond the limit, so together they never leave more than SESSION_LIMIT live.
 */
async function retireSurplusSessions(env: Env, userId: string): Promise<void> {
  const { results } = await env.DB.prepare(SURPLUS_SESSIONS_SQL)
    .bind(userId, nowIso(), SESSION_LIMIT)
    .all<{ id: string; token_hash: string }>();
  for (const surplus of results) await revokeRow(env, { id: surplus.id, tokenHash: surplus.token_hash });
}

/** Pushes the revocation to the token's gate first, so the very next request is refused. */
async function revokeRow(env: Env, row: { id: string; tokenHash: string }): Promise<void> {
  await env.TOKEN_GATE.get(env.TOKEN_GATE.idFromName(row.tokenHash)).revoke();
  await database(env.DB)
    .update(apiTokens)
    .set({ revokedAt: nowIso() })
    .where(and(eq(apiTokens.id, row.id), isNull(apiTokens.revokedAt)))
    .run();
}

/**
 * An API token for the caller. It can never exceed its owner's role nor the token that creates it,
 * so a narrowly scoped token cannot mint a broader one.
 */
export async function createApiToken({
  env,
  principal,
  input,
}: {
  env: Env;
  principal: Principal;
  input: { name: string; abilities: string[]; expires_at?: string | null };
}) {
  const role = principal.user.role;
  const beyondRole = abilitiesBeyondRole(input.abilities, role);
  if (beyondRole.length > 0) {
    throw new ApiError(
      "forbidden",
      `The ${role} role cannot hold ${beyondRole.map((a) => `\`${a}\``).join(", ")}.`,
    );
  }
  const granted: Ability[] = effectiveAbilities(input.abilities, role);
  const beyondToken = granted.filter((a) => !principal.token.abilities.includes(a));
  if (beyondToken.length > 0) {
    throw new ApiError(
      "forbidden",
      `This token cannot grant ${beyondToken.map((a) => `\`${a}\``).join(", ")}, which it does not hold itself.`,
    );
  }
  let expiresAt: string | null = null;
  if (input.expires_at) {
    const when = Date.parse(input.expires_at);
    if (when <= Date.now()) throw validationError([{ path: "expires_at", message: "must be in the future" }]);
    expiresAt = nowIso(when);
  }
  const abilities = [...new Set(input.abilities)];
  return insertToken(
    env,
    { userId: principal.user.id, institutionId: principal.institution?.id ?? null },
    {
      name: input.name,
      abilities,
      expiresAt,
      kind: "api",
    },
  );
}

/**
 * Revocation is pushed to the token's Durable Object first, so the very next request is refused even
 * if the D1 write below fails (the caller then retries the DELETE, which is safe).
 */
export async function revokeToken({
  env,
  principal,
  tokenId,
}: {
  env: Env;
  principal: Principal;
  tokenId: string;
}): Promise<void> {
  const db = database(env.DB);
  const row = await db
    .select({ id: apiTokens.id, tokenHash: apiTokens.tokenHash })
    .from(apiTokens)
    .where(and(eq(apiTokens.id, tokenId), manageableBy(principal)))
    .get();
  if (!row) throw new ApiError("not_found", `No token ${tokenId}.`);
  await revokeRow(env, row);
}
