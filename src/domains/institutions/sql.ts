import { type SQL, sql } from "drizzle-orm";
import { institutions } from "../../db/schema";

/**
 * The institutions domain's raw SQL, as drizzle `sql` fragments of its list query (analytics keeps
 * its statements in analytics/sql.ts). Each is tested in test/institutions/sql.test.ts.
 */

/**
 * An institution's members, every role and status, as a column of a select `FROM institutions`
 * (a correlated count, so that a page of institutions reads its counts in the same statement).
 */
export const MEMBER_COUNT = sql<number>`(SELECT count(*) FROM users AS member WHERE member.institution_id = "institutions"."id")`;

/**
 * A condition on `institutions`: the name (in any case) or the slug contains `q`. The LIKE
 * wildcards `%` and `_` (and the escape `\`) in `q` match themselves.
 */
export function nameOrSlugContains(q: string): SQL {
  const pattern = `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql`(lower(${institutions.name}) LIKE ${pattern} ESCAPE '\\' OR ${institutions.slug} LIKE ${pattern} ESCAPE '\\')`;
}

/** The list's sort text: the name in lower case (ASCII, as SQLite's `lower`); ties by id. */
export const SORT_NAME = sql<string>`lower(${institutions.name})`;

/**
 * A condition on `institutions`: the row comes after (`>`) or before (`<`) `key` in the list's order,
 * `(lower(name), id)` — where a `next` or `prev` link's page starts (platform/http/spread-pages.ts).
 */
export function beyondInListOrder(direction: "after" | "before", [name, id]: readonly [string, string]): SQL {
  return direction === "after"
    ? sql`(lower(${institutions.name}) > ${name} OR (lower(${institutions.name}) = ${name} AND ${institutions.id} > ${id}))`
    : sql`(lower(${institutions.name}) < ${name} OR (lower(${institutions.name}) = ${name} AND ${institutions.id} < ${id}))`;
}
