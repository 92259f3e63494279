import type { BatchItem } from "drizzle-orm/batch";

/** D1 binds at most 100 parameters per statement: rows per multi-row INSERT for a table this wide. */
export function rowsPerStatement(columns: number): number {
  return Math.max(1, Math.floor(100 / columns));
}

export function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export type Statement = BatchItem<"sqlite">;
