import type { apiTokens } from "../../db/schema";

/**
 * The tokens domain's raw SQL: statements drizzle cannot express as one statement (a count and an
 * insert that D1 must run together) or that the token list's hot path reads faster as JSON.
 */

type TokenRow = typeof apiTokens.$inferSelect;

// The token list as SQLite writes it: one row with the total and the page as a JSON array whose
// objects have the wire shape of `presentToken` (same keys, same order), so D1 hands back two values
// instead of a row per token and nothing maps or re-serialises the rows in the worker. The one list
// that does not use `pageWithTotal` (platform/http/pagination): it is on the bench's hot path,
// measured faster this way. New lists use `pageWithTotal`; do not copy this.
const TOKEN_JSON = `json_object('id', id, 'name', name, 'kind', kind, 'abilities', json(abilities), 'prefix', prefix,
  'user_id', user_id, 'created_at', created_at, 'last_used_at', last_used_at, 'expires_at', expires_at)`;
function tokenPageSql(owner: "institution_id" | "user_id", byKind: boolean): string {
  const where = `${owner} = ?1 AND revoked_at IS NULL${byKind ? " AND kind = ?4" : ""}`;
  return `SELECT (SELECT count(*) FROM api_tokens WHERE ${where}) AS total,
  (SELECT json_group_array(${TOKEN_JSON} ORDER BY created_at DESC, id DESC) FROM
    (SELECT * FROM api_tokens WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3)) AS data`;
}

/**
 * A page of active tokens, newest first (ties by id). Binds ?1 the institution (by `institution_id`)
 * or the user (by `user_id`), ?2 limit, ?3 offset[, ?4 kind]. One row: `TokenPageRow`.
 */
export const TOKEN_PAGE_SQL = {
  institution_id: {
    all: tokenPageSql("institution_id", false),
    byKind: tokenPageSql("institution_id", true),
  },
  user_id: { all: tokenPageSql("user_id", false), byKind: tokenPageSql("user_id", true) },
};
/** `total`: active tokens in scope; `data`: the page as JSON text, items in the wire shape. */
export interface TokenPageRow {
  total: number;
  data: string;
}

/**
 * Inserts an API token only while its owner holds fewer than ?10 live ones. The insert and the count
 * are one statement, which D1 runs alone: concurrent creations cannot both see room for the last
 * token. Binds ?1 id, ?2 user, ?3 institution, ?4 name, ?5 hash, ?6 prefix, ?7 abilities (JSON),
 * ?8 created_at (now), ?9 expires_at, ?10 the limit. Changes 1 row, or 0 at the limit.
 */
export const INSERT_API_TOKEN_UNDER_LIMIT_SQL = `INSERT INTO api_tokens
  (id, user_id, institution_id, kind, name, token_hash, prefix, abilities, created_at, expires_at)
  SELECT ?1, ?2, ?3, 'api', ?4, ?5, ?6, ?7, ?8, ?9
  WHERE (SELECT count(*) FROM api_tokens WHERE user_id = ?2 AND kind = 'api' AND revoked_at IS NULL
    AND (expires_at IS NULL OR expires_at > ?8)) < ?10`;

/** A user's (?1) live sessions at ?2 beyond the newest ?3: `SurplusSessionRow`s, oldest last. */
export const SURPLUS_SESSIONS_SQL = `SELECT id, token_hash FROM api_tokens
  WHERE user_id = ?1 AND kind = 'session' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)
  ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?3`;
export interface SurplusSessionRow {
  id: TokenRow["id"];
  token_hash: TokenRow["tokenHash"];
}
