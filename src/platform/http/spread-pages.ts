import { z } from "@hono/zod-openapi";
import { validationError } from "../errors";
import type { Page, PageRequest } from "./pagination";

/**
 * A list whose rows live in several databases (platform staff's lists: design/multi-database.md
 * #platform-wide-reads), read from each in parallel and merged by the list's order. Each database
 * reads a window: the rows after (or before) a cursor's key when the request carries the `cursor` of
 * a `next` (or `prev`) link, one page and one more row; otherwise the first `page × per_page` rows and
 * one more. The merge gives exactly the page one database holding every row would give.
 *
 * The list's order is a text key then the row's id, both compared as SQLite's `BINARY` collation
 * compares them (by code point), so that the merge and each database's `ORDER BY` agree.
 */

/** A row's place in the list's order: its sort text (as the statement computed it) and its id. */
export type SortKey = readonly [text: string, id: string];

/** Where a `next` or `prev` link's page starts: after (or before) a row's key, and its page number. */
export interface PageCursor {
  page: number;
  direction: "after" | "before";
  key: SortKey;
}

/** What each database reads for a request. */
export type Window =
  | { kind: "first"; limit: number }
  | { kind: "after" | "before"; key: SortKey; limit: number };

/** The `cursor` query parameter of a list that spans the databases. */
export const cursorQueryShape = {
  cursor: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .openapi({
      param: { name: "cursor", in: "query" },
      description:
        "Opaque: where the page starts, as `links.next` and `links.prev` carry it (with their `page`). Follow those links unchanged; a page asked for by `page` alone is the same page. Invalid, or sent with another `page` than its link's: 422.",
    }),
};

const CURSOR_VERSION = 1;

function toBase64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string | null {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
  } catch {
    return null;
  }
}

export function encodeCursor(cursor: PageCursor): string {
  const direction = cursor.direction === "after" ? "a" : "b";
  return toBase64Url(JSON.stringify([CURSOR_VERSION, cursor.page, direction, cursor.key[0], cursor.key[1]]));
}

/** The cursor of a link, or null when `text` is not one this API sent. */
export function decodeCursor(text: string): PageCursor | null {
  const json = fromBase64Url(text);
  if (json === null) return null;
  let parts: unknown;
  try {
    parts = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(parts) || parts.length !== 5) return null;
  const [version, page, direction, sortText, id] = parts;
  if (version !== CURSOR_VERSION || !Number.isInteger(page) || (page as number) < 1) return null;
  if ((direction !== "a" && direction !== "b") || typeof sortText !== "string" || typeof id !== "string")
    return null;
  return { page: page as number, direction: direction === "a" ? "after" : "before", key: [sortText, id] };
}

/**
 * The request's cursor, checked against its `page`: a link's cursor leads to the page the link
 * names. Throws 422 for a cursor this API did not send, or one sent with another page.
 */
export function requestCursor(request: PageRequest, text: string | undefined): PageCursor | null {
  if (text === undefined) return null;
  const cursor = decodeCursor(text);
  if (!cursor)
    throw validationError([
      { path: "cursor", message: "is not a cursor of this list; follow `links` unchanged" },
    ]);
  if (cursor.page !== request.page)
    throw validationError([
      {
        path: "cursor",
        message: `leads to page ${cursor.page}, not ${request.page}; follow \`links\` unchanged`,
      },
    ]);
  return cursor;
}

/** What each database reads: one row more than the merge needs, to know whether more follow. */
export function windowFor(request: PageRequest, cursor: PageCursor | null): Window {
  if (cursor) return { kind: cursor.direction, key: cursor.key, limit: request.per_page + 1 };
  return { kind: "first", limit: Math.min(request.page * request.per_page + 1, Number.MAX_SAFE_INTEGER) };
}

/** Code-point order, as SQLite's BINARY collation orders UTF-8 text (JavaScript's `<` is UTF-16's). */
export function compareText(a: string, b: string): number {
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0) as number;
    const cy = y.value.codePointAt(0) as number;
    if (cx !== cy) return cx - cy;
  }
}

export function compareKeys(a: SortKey, b: SortKey): number {
  return compareText(a[0], b[0]) || compareText(a[1], b[1]);
}

/** A page merged from every database's window, with whether rows follow it and precede it. */
export interface MergedPage<Row> {
  rows: Row[];
  /** Rows follow the page (exact: each database read one more than it needed). */
  hasMore: boolean;
  /** Rows precede the page. */
  hasPrevious: boolean;
}

/**
 * Merges the windows every database read (each in the list's order; a `before` window in reverse
 * order, as its statement reads it) into the request's page.
 */
export function mergeWindows<Row>(
  windows: readonly Row[][],
  keyOf: (row: Row) => SortKey,
  request: PageRequest,
  window: Window,
): MergedPage<Row> {
  const all = windows.flat().sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
  const size = request.per_page;
  if (window.kind === "before") {
    const rows = all.slice(Math.max(0, all.length - size));
    return { rows, hasMore: true, hasPrevious: all.length > size };
  }
  if (window.kind === "after") {
    return { rows: all.slice(0, size), hasMore: all.length > size, hasPrevious: true };
  }
  const offset = (request.page - 1) * size;
  return {
    rows: all.slice(offset, offset + size),
    hasMore: all.length > offset + size,
    hasPrevious: request.page > 1,
  };
}

/**
 * The envelope's `next` and `prev` links with cursors: `next` starts after the page's last row and
 * is null when no row follows; `prev` ends before its first row (a page past the end, which has no
 * row, keeps `paginate`'s `prev`). `first` and `last` carry no cursor: they are the same pages by
 * number.
 */
export function withCursorLinks<T, Row>(
  page: Page<T>,
  request: PageRequest,
  merged: MergedPage<Row>,
  keyOf: (row: Row) => SortKey,
): Page<T> {
  const withoutCursor = (link: string) => {
    const url = new URL(link);
    url.searchParams.delete("cursor");
    return url.toString();
  };
  const at = (link: string, cursor: PageCursor) => {
    const url = new URL(link);
    url.searchParams.set("page", String(cursor.page));
    url.searchParams.set("cursor", encodeCursor(cursor));
    return url.toString();
  };
  const first = merged.rows[0];
  const last = merged.rows[merged.rows.length - 1];
  const next =
    merged.hasMore && last
      ? at(page.links.first, { page: request.page + 1, direction: "after", key: keyOf(last) })
      : null;
  const prev =
    request.page > 1 && merged.hasPrevious && first
      ? at(page.links.first, { page: request.page - 1, direction: "before", key: keyOf(first) })
      : page.links.prev && withoutCursor(page.links.prev);
  return {
    ...page,
    links: { first: withoutCursor(page.links.first), last: withoutCursor(page.links.last), prev, next },
  };
}
