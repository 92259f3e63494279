import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import * as schema from "../db/schema";

export type Database = DrizzleD1Database<typeof schema>;

const clients = new WeakMap<D1Database, Database>();

/** One drizzle client per D1 binding, reused across requests of the same isolate. */
export function database(d1: D1Database): Database {
  let client = clients.get(d1);
  if (!client) {
    client = drizzle(d1, { schema });
    clients.set(d1, client);
  }
  return client;
}

/**
 * `column IN (…)` for any number of values with one bound parameter (a JSON array), where
 * drizzle's `inArray` binds one each and D1 refuses more than 100 per statement.
 */
export function inJsonList(column: AnyColumn | SQL, values: readonly (string | number)[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
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
