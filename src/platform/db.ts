import {
  type AnyColumn,
  createTableRelationsHelpers,
  extractTablesRelationalConfig,
  type RelationalSchemaConfig,
  type SQL,
  sql,
  type TablesRelationalConfig,
} from "drizzle-orm";
import { DrizzleD1Database, SQLiteD1Session } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import * as schema from "../db/schema";

export type Database = DrizzleD1Database<typeof schema>;

/**
 * What drizzle's `drizzle(d1, { schema })` derives from the schema on every call, derived once per
 * isolate: a request builds its own client over its own D1 session (platform/service/context.ts), and
 * walking every table's relations per request would cost each one for nothing.
 */
let relational: RelationalSchemaConfig<TablesRelationalConfig> | undefined;
const dialect = new SQLiteAsyncDialect();

function relationalSchema() {
  if (!relational) {
    const tables = extractTablesRelationalConfig(schema, createTableRelationsHelpers);
    relational = { fullSchema: schema, schema: tables.tables, tableNamesMap: tables.tableNamesMap };
  }
  return relational;
}

/**
 * A drizzle client over `d1`: a D1 session (the service context's, or `withSession(…)` of a Durable
 * Object's own read) or anything shaped like D1's binding. drizzle only prepares and batches, which a
 * session does as the binding does.
 */
export function database(d1: D1Database | D1DatabaseSession): Database {
  const schemaConfig = relationalSchema();
  const session = new SQLiteD1Session(d1 as D1Database, dialect, schemaConfig as never, {});
  return new DrizzleD1Database("async", dialect, session as never, schemaConfig as never) as Database;
}

/**
 * `column IN (…)` for any number of values with one bound parameter (a JSON array), where
 * drizzle's `inArray` binds one each and D1 refuses more than 100 per statement.
 */
export function inJsonList(column: AnyColumn | SQL, values: readonly (string | number)[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}
