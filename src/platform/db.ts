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
