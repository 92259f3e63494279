/**
 * The statements of an institution's move (design/multi-database.md#moving-an-institution-online),
 * built from the table registry (db/institution-tables.ts): every statement takes `?1`, the
 * institution's id, and selects its rows by the same condition in either database. A page is read
 * in primary-key order after a cursor (the last key done), so a step resumed from its checkpoint
 * reads on where it stopped. Rows travel between databases as one JSON array per page.
 */
import type { DirectoryKind } from "../service/directory";

export interface MovedTable {
  name: string;
  columns: string[];
  primaryKey: string[];
  /** The condition selecting the institution's rows, `?1` its id. */
  where: string;
}

const q = (name: string) => `"${name}"`;

/** `AND (pk…) > (?2, ?3…)` after a cursor, or nothing for the first page. */
function after(table: MovedTable, cursor: unknown[] | null): { sql: string; params: unknown[] } {
  if (!cursor) return { sql: "", params: [] };
  const keys = table.primaryKey.map(q).join(", ");
  const marks = table.primaryKey.map((_, i) => `?${i + 2}`).join(", ");
  return { sql: ` AND (${keys}) > (${marks})`, params: cursor };
}

/** A page of the institution's rows, whole, after `cursor`, in primary-key order. */
export function pageOfRows(
  table: MovedTable,
  cursor: unknown[] | null,
  limit: number,
): { sql: string; params: unknown[] } {
  const next = after(table, cursor);
  return {
    sql: `SELECT ${table.columns.map(q).join(", ")} FROM ${q(table.name)} WHERE (${table.where})${next.sql}
      ORDER BY ${table.primaryKey.map(q).join(", ")} LIMIT ${Math.trunc(limit)}`,
    params: next.params,
  };
}

/** A page of the institution's primary keys (each row an array), after `cursor`. */
export function pageOfKeys(
  table: MovedTable,
  cursor: unknown[] | null,
  limit: number,
): { sql: string; params: unknown[] } {
  const next = after(table, cursor);
  const keys = table.primaryKey.map(q).join(", ");
  return {
    sql: `SELECT json_array(${keys}) AS k FROM ${q(table.name)} WHERE (${table.where})${next.sql}
      ORDER BY ${keys} LIMIT ${Math.trunc(limit)}`,
    params: next.params,
  };
}

/**
 * Writes a page of rows (`?1`, a JSON array of objects) into the target: a row already there takes
 * the source's values (`upsert`: the last copy makes rows updated in place right), or is left as it
 * is (`ignore`: the delete step's rescue of a straggler never overwrites the target's newer row).
 */
export function writeRows(table: MovedTable, mode: "upsert" | "ignore"): string {
  const columns = table.columns.map(q).join(", ");
  const values = table.columns.map((c) => `value->>'${c}'`).join(", ");
  const others = table.columns.filter((c) => !table.primaryKey.includes(c));
  const conflict =
    mode === "ignore" || others.length === 0
      ? "DO NOTHING"
      : `DO UPDATE SET ${others.map((c) => `${q(c)} = excluded.${q(c)}`).join(", ")}`;
  return `INSERT INTO ${q(table.name)} (${columns}) SELECT ${values} FROM json_each(?1) WHERE true
    ON CONFLICT (${table.primaryKey.map(q).join(", ")}) ${conflict}`;
}

/** `pk1 = j.value->>0 AND pk2 = j.value->>1`: a row of the table whose key is `j`'s. */
function keyMatches(table: MovedTable, alias: string): string {
  return table.primaryKey.map((c, i) => `${q(table.name)}.${q(c)} = ${alias}.value->>${i}`).join(" AND ");
}

/** Of the keys of `?1` (a JSON array of key arrays), those the table has: each as its JSON array. */
export function keysPresent(table: MovedTable): string {
  return `SELECT j.value AS k FROM json_each(?1) j
    WHERE EXISTS (SELECT 1 FROM ${q(table.name)} WHERE ${keyMatches(table, "j")})`;
}

/** Deletes the rows whose keys are in `?1` (a JSON array of key arrays). */
export function deleteKeys(table: MovedTable): string {
  return `DELETE FROM ${q(table.name)} WHERE EXISTS (SELECT 1 FROM json_each(?1) j WHERE ${keyMatches(table, "j")})`;
}

/** Whether the institution has any row left in the table. */
export function anyRow(table: MovedTable): string {
  return `SELECT 1 AS found FROM ${q(table.name)} WHERE (${table.where}) LIMIT 1`;
}

/**
 * The institution's directory keys in `DB` for a page of the tables that have them (`?1`: the page's
 * JSON array of the key's columns, `?2`: the institution): written when it is moved away from `DB`,
 * so that every entry point finds it there (design/multi-database.md#entry-points-found-by-a-key).
 * `takeOver`: a key unique to one row (a hash, an address, a slug) is the institution's whoever held
 * it (only a key left by a failed write can be another's); a key several institutions may want
 * (a platform's issuer and client id, an SSO domain) stays with its holder.
 * test/platform/institution-move.test.ts holds every kind of key to an entry here.
 */
export interface MovedKey {
  kind: DirectoryKind;
  columns: string[];
  /** The key, from `value` (a row of the page). */
  key: string;
  /** Which rows have a key (all when absent). */
  when?: string;
  takeOver: boolean;
}
// Parenthesised: `->>` and `||` share one precedence in SQLite.
const keyOf = (column: string) => `(value->>'${column}')`;
const single = (kind: DirectoryKind, column: string): MovedKey => ({
  kind,
  columns: [column],
  key: keyOf(column),
  takeOver: true,
});
export const WRITE_KEYS: Record<string, readonly MovedKey[]> = {
  institutions: [single("slug", "slug")],
  api_tokens: [single("token", "token_hash")],
  users: [single("email", "email")],
  scim_tokens: [single("scim_token", "token_hash")],
  billing_accounts: [single("stripe_customer", "stripe_customer_id")],
  sso_domains: [
    {
      kind: "sso_domain",
      columns: ["domain", "status"],
      key: keyOf("domain"),
      when: `${keyOf("status")} = 'verified'`,
      takeOver: false,
    },
  ],
  lti_consumers: [
    single("lti_registration", "id"),
    // clientKey() of domains/lti/registrations/directory-keys.ts: `<issuer> <client id>`.
    {
      kind: "lti_client",
      columns: ["issuer", "client_id"],
      key: `${keyOf("issuer")} || ' ' || ${keyOf("client_id")}`,
      takeOver: false,
    },
  ],
};
export function writeKeys(moved: MovedKey): string {
  const conflict = moved.takeOver
    ? "ON CONFLICT (kind, key) DO UPDATE SET institution_id = excluded.institution_id"
    : "ON CONFLICT (kind, key) DO NOTHING";
  return `INSERT INTO directory_keys (kind, key, institution_id)
    SELECT '${moved.kind}', ${moved.key}, ?2 FROM json_each(?1) WHERE (${moved.key}) IS NOT NULL${moved.when ? ` AND ${moved.when}` : ""}
    ${conflict}`;
}

/** Removes the institution's directory keys (moved back to `DB`, where its rows are found without them). */
export const DELETE_KEYS = "DELETE FROM directory_keys WHERE institution_id = ?1";

/**
 * Stops the institution's writes: its directory row `moving` (inserted at its current database and
 * epoch 0 when it has none). `?1` institution, `?2` its current binding, `?3` now (ISO).
 */
export const FREEZE = `INSERT INTO institution_databases (institution_id, binding, epoch, state, updated_at)
  VALUES (?1, ?2, 0, 'moving', ?3)
  ON CONFLICT (institution_id) DO UPDATE SET state = 'moving', updated_at = excluded.updated_at
  WHERE institution_databases.binding = excluded.binding`;

/** Points the directory at `?2` (epoch + 1) and lets writes resume; `?3` now (ISO). */
export const SWITCH = `UPDATE institution_databases SET binding = ?2, epoch = epoch + 1, state = 'active', updated_at = ?3
  WHERE institution_id = ?1 AND state = 'moving'`;

/** The institution's directory row, read at `DB`'s primary. */
export const PLACEMENT = "SELECT binding, state FROM institution_databases WHERE institution_id = ?1";

/** Lets writes resume where they were (a failed verification, a failed move). */
export const THAW = `UPDATE institution_databases SET state = 'active', updated_at = ?2
  WHERE institution_id = ?1 AND state = 'moving'`;
