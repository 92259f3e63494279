import { jsonArrays } from "../batch";
import { everyDatabase, type ServiceContext } from "../service/context";
import { type DatabaseBinding, FIRST_DATABASE } from "../service/databases";
import type { InstitutionMove } from "./jobs";
import { type MovedTable, PLACEMENT, pageOfKeys, pageOfRows, WRITE_KEYS, writeKeys, writeRows } from "./sql";

/** Rows per page: read at once from one database, written as one or a few JSON arrays to the other. */
export const MOVE_PAGE_ROWS = 500;
/** Within the switch, how often a checkpoint is written (the steps in between are redone after a crash). */
export const LAZY_CHECKPOINT_MS = 1_000;
/** Passes of the switch (and of the deletion) before the move gives up. */
export const MAX_PASSES = 3;

export interface Side {
  name: DatabaseBinding;
  d1: D1Database;
}

export interface MoveProgress {
  copied: Record<string, number>;
  verified: Record<string, number>;
  deleted: Record<string, number>;
  /** How long the institution's writes were refused, once it switched (ms). */
  freezeMs?: number;
}

export function side(ctx: ServiceContext, name: string): Side {
  const found = everyDatabase(ctx).find((db) => db.name === name);
  if (!found) throw new Error(`no D1 database bound as ${name}`);
  return { name: found.name, d1: found.d1 };
}

export const add = (counts: Record<string, number>, table: string, n: number) => {
  counts[table] = (counts[table] ?? 0) + n;
};

export async function rowsPage(
  from: Side,
  table: MovedTable,
  institutionId: string,
  after: unknown[] | null,
) {
  const { sql, params } = pageOfRows(table, after, MOVE_PAGE_ROWS);
  const { results } = await from.d1
    .prepare(sql)
    .bind(institutionId, ...params)
    .all<Record<string, unknown>>();
  return results;
}

export async function keysPage(
  from: Side,
  table: MovedTable,
  institutionId: string,
  after: unknown[] | null,
) {
  const { sql, params } = pageOfKeys(table, after, MOVE_PAGE_ROWS);
  const { results } = await from.d1
    .prepare(sql)
    .bind(institutionId, ...params)
    .all<{ k: string }>();
  return results.map((row) => row.k);
}

export const lastKey = (table: MovedTable, row: Record<string, unknown>) =>
  table.primaryKey.map((c) => row[c]);

/** Writes rows into `to` (and, for tokens and members moved away from `DB`, their directory keys). */
export async function writePage(
  ctx: ServiceContext,
  to: Side,
  table: MovedTable,
  rows: Record<string, unknown>[],
  institutionId: string,
  mode: "upsert" | "ignore",
): Promise<void> {
  if (rows.length === 0) return;
  const keys = WRITE_KEYS[table.name] ?? [];
  if (keys.length > 0 && to.name !== FIRST_DATABASE) {
    // The keys before the rows, as every writer of a key does.
    await ctx.home.d1.batch(
      keys.flatMap((key) =>
        jsonArrays(rows.map((row) => Object.fromEntries(key.columns.map((c) => [c, row[c]])))).map((json) =>
          ctx.home.d1.prepare(writeKeys(key)).bind(json, institutionId),
        ),
      ),
    );
  }
  const sql = writeRows(table, mode);
  await to.d1.batch(jsonArrays(rows).map((json) => to.d1.prepare(sql).bind(json)));
}

/**
 * Whether the directory already places the institution in the move's target: the switch happened
 * (its invocation may have died before recording it). From then on nothing may prune, verify or
 * abandon the target, where the institution's writes go.
 */
export async function switchedAlready(ctx: ServiceContext, job: InstitutionMove): Promise<boolean> {
  const row = await ctx.home.d1
    .prepare(PLACEMENT)
    .bind(job.institutionId)
    .first<{ binding: string; state: string }>();
  return row?.binding === job.target && row.state === "active";
}

/** Works on the held move until it is done or `deadline` passes ("continue": the next message goes on). */
