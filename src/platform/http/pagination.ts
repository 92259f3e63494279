import { z } from "@hono/zod-openapi";
import { count, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import type { Database } from "../db";

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 25;

/** `page` and `per_page` for every list; spread into a route's query schema. */
export const pageQueryShape = {
  page: z.coerce
    .number()
    .int()
    .min(1, "must be >= 1")
    .default(1)
    .openapi({
      param: { name: "page", in: "query" },
      example: 1,
      description: "Page number, from 1. A page past the end is empty.",
    }),
  per_page: z.coerce
    .number()
    .int()
    .min(1, "must be >= 1")
    .max(MAX_PER_PAGE, `must be <= ${MAX_PER_PAGE}`)
    .default(DEFAULT_PER_PAGE)
    .openapi({
      param: { name: "per_page", in: "query" },
      example: DEFAULT_PER_PAGE,
      description: `Items per page, 1–${MAX_PER_PAGE}.`,
    }),
};

export const PageQuery = z.object(pageQueryShape);

export interface PageRequest {
  page: number;
  per_page: number;
}

export function pageBounds({ page, per_page }: PageRequest): { limit: number; offset: number } {
  return { limit: per_page, offset: (page - 1) * per_page };
}

/** A page of a list's rows and how many rows the whole list has. */
export interface PageResult<Row> {
  total: number;
  rows: Row[];
}

/**
 * The one way a list reads its page and its total: the page's query (bounded by `pageBounds`) and
 * `count(*)` of `table` under the same `where`, in one D1 batch — one round trip, one snapshot, and
 * a page past the end still knows the total.
 */
export async function pageWithTotal<Page extends BatchItem<"sqlite">>(
  db: Database,
  page: Page,
  table: SQLiteTable,
  where: SQL | undefined,
): Promise<{ rows: Awaited<Page>; total: number }> {
  const [rows, totals] = await db.batch([page, db.select({ total: count() }).from(table).where(where)]);
  return { rows: rows as Awaited<Page>, total: totals[0]?.total ?? 0 };
}

/**
 * `pageWithTotal` with the list's parent read in the same batch (the institution whose members are
 * listed, …): still one round trip, and the parent seen in the page's snapshot. Null when `parent`
 * finds no row, so that a missing parent answers 404 rather than an empty list.
 */
export async function parentPageWithTotal<
  Parent extends BatchItem<"sqlite">,
  Page extends BatchItem<"sqlite">,
>(
  db: Database,
  parent: Parent,
  page: Page,
  table: SQLiteTable,
  where: SQL | undefined,
): Promise<{ parent: Awaited<Parent>; rows: Awaited<Page>; total: number } | null> {
  const [found, rows, totals] = await db.batch([
    parent,
    page,
    db.select({ total: count() }).from(table).where(where),
  ]);
  if (Array.isArray(found) ? found.length === 0 : found == null) return null;
  return { parent: found as Awaited<Parent>, rows: rows as Awaited<Page>, total: totals[0]?.total ?? 0 };
}

const LinksSchema = z
  .object({
    first: z.url(),
    last: z.url(),
    prev: z.url().nullable(),
    next: z.url().nullable(),
  })
  .openapi("PageLinks");

const MetaSchema = z
  .object({
    total: z.number().int(),
    per_page: z.number().int(),
    current_page: z.number().int(),
    last_page: z.number().int(),
  })
  .openapi("PageMeta");

/** The list envelope of CONVENTIONS.md around an item schema. */
export function pageSchema<T extends z.ZodType>(item: T, name: string) {
  return z.object({ data: z.array(item), links: LinksSchema, meta: MetaSchema }).openapi(name);
}

export interface Page<T> {
  data: T[];
  links: { first: string; last: string; prev: string | null; next: string | null };
  meta: { total: number; per_page: number; current_page: number; last_page: number };
}

/**
 * Builds the envelope; links keep every other query parameter of the request (or of `url`, the
 * request's normalised form) and change `page`.
 */
export function paginate<T>(at: Context | string, request: PageRequest, total: number, data: T[]): Page<T> {
  return { data, ...pageLinksAndMeta(at, request, total) };
}

function pageLinksAndMeta(
  at: Context | string,
  request: PageRequest,
  total: number,
): Omit<Page<never>, "data"> {
  const lastPage = Math.max(1, Math.ceil(total / request.per_page));
  // One parse of the request URL for all four links: setting `page` again on the same URL gives the
  // same text as setting it once on a fresh copy (it stays where the first `set` put it).
  const url = new URL(typeof at === "string" ? at : at.req.url);
  const link = (page: number) => {
    url.searchParams.set("page", String(page));
    return url.toString();
  };
  return {
    links: {
      first: link(1),
      last: link(lastPage),
      prev: request.page > 1 ? link(Math.min(request.page - 1, lastPage)) : null,
      next: request.page < lastPage ? link(request.page + 1) : null,
    },
    meta: { total, per_page: request.per_page, current_page: request.page, last_page: lastPage },
  };
}

/**
 * The same envelope as `JSON.stringify(paginate(...))`, byte for byte, around a page whose items
 * are already a JSON array text (written by SQLite), so they are neither parsed nor re-serialised.
 */
export function paginateJson(c: Context, request: PageRequest, total: number, dataJson: string): string {
  const { links, meta } = pageLinksAndMeta(c, request, total);
  return `{"data":${dataJson},"links":${JSON.stringify(links)},"meta":${JSON.stringify(meta)}}`;
}
