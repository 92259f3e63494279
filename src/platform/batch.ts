import { type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "./db";

/** D1 binds at most 100 parameters per statement: rows per multi-row INSERT for a table this wide. */
export function rowsPerStatement(columns: number): number {
  return Math.max(1, Math.floor(100 / columns));
}

export function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * D1 accepts at most 2 MB in one bound value. Rows that travel as one JSON array (`json_each(?1)`)
 * are split into arrays of at most `maxChars` characters — 600,000 by default, at most 1.8 MB of
 * UTF-8 — to be bound to one statement each, in order.
 */
export function jsonArrays(items: readonly unknown[], maxChars = 600_000): string[] {
  const arrays: string[] = [];
  let current: string[] = [];
  let size = 2;
  for (const item of items) {
    const text = JSON.stringify(item);
    if (current.length > 0 && size + text.length + 1 > maxChars) {
      arrays.push(`[${current.join(",")}]`);
      current = [];
      size = 2;
    }
    current.push(text);
    size += text.length + 1;
  }
  if (current.length > 0) arrays.push(`[${current.join(",")}]`);
  return arrays;
}

export type Statement = BatchItem<"sqlite">;

/**
 * A batch statement that fails, and so rolls the whole batch back, unless `condition` (an SQL
 * boolean) holds when it runs: D1 runs a batch as one transaction, so a check placed in it cannot be
 * overtaken by another writer the way a read before the batch can. The failure is SQLite's
 * "malformed JSON" error; `isBatchGuardFailure` recognises it.
 */
export function batchGuard(db: Database, condition: SQL) {
  // json() of a text that is not JSON raises an error. A query builder, not db.run(sql): drizzle's
  // D1 batch cannot bind the parameters of a raw statement.
  return db
    .select({ ok: sql<string>`json(CASE WHEN ${condition} THEN '1' ELSE 'guard failed' END)` })
    .from(sql`(SELECT 1)`);
}

export function isBatchGuardFailure(error: unknown): boolean {
  const text = String(error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : error);
  return /malformed JSON/i.test(text);
}
