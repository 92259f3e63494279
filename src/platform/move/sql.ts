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
 * The institution's directory keys in `DB` (its slug, a token's hash, a member's e-mail) for a page of
 * its `institutions`, `api_tokens` or `users` (`?1`: that page's JSON array, `?2`: the institution): written when it is
 * moved away from `DB`, so that its tokens and addresses are found there.
 */
export const WRITE_KEYS: Record<string, { kind: DirectoryKind; column: string }> = {
  institutions: { kind: "slug", column: "slug" },
  api_tokens: { kind: "token", column: "token_hash" },
  users: { kind: "email", column: "email" },
};
export function writeKeys(kind: DirectoryKind, column: string): string {
  return `INSERT INTO directory_keys (kind, key, institution_id)
    SELECT '${kind}', value->>'${column}', ?2 FROM json_each(?1) WHERE value->>'${column}' IS NOT NULL
    ON CONFLICT (kind, key) DO UPDATE SET institution_id = excluded.institution_id`;
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
