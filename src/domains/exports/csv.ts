import { stringify, type Options } from "csv-stringify/sync";

/**
 * CSV per CONVENTIONS.md: RFC 4180 (comma, `"` quoting, CRLF), UTF-8, and the formula-injection
 * guard. Quoting is csv-stringify's; so is the guard for cells starting with `=`, `+`, `-`, `@`, tab
 * or carriage return (`escape_formulas`, which leaves numbers such as -3 alone). NUL, which our
 * conventions add and the library does not check, is guarded by the string cast below.
 */
const OPTIONS: Options = {
  delimiter: ",",
  quote: '"',
  record_delimiter: "\r\n",
  // Quote cells holding a bare LF or CR too (with an explicit record_delimiter the library's default
  // would quote only those holding the CRLF pair, which no RFC 4180 reader accepts).
  quote_record_delimiter: true,
  escape_formulas: true,
  cast: {
    boolean: (value) => (value ? "true" : "false"),
    string: (value) => (value.charCodeAt(0) === 0 ? `'${value}` : value),
  },
};

export type Cell = string | number | boolean | null;

/**
 * Rows → CSV text, each row ending in CRLF. Only the first `width` cells of each row are written:
 * sources append their keyset columns after the visible ones.
 */
export function csvRows(rows: readonly (readonly Cell[])[], width: number): string {
  if (rows.length === 0) return "";
  return stringify(rows as Cell[][], { ...OPTIONS, columns: columnIndexes(width) });
}

/** The header line. */
export function csvHeader(names: readonly string[]): string {
  return stringify([names as string[]], OPTIONS);
}

// For array records csv-stringify only takes the count of `columns`: each row's first `width` cells.
const indexCache = new Map<number, string[]>();
function columnIndexes(width: number): string[] {
  let columns = indexCache.get(width);
  if (!columns) {
    columns = Array.from({ length: width }, (_, i) => String(i));
    indexCache.set(width, columns);
  }
  return columns;
}

/** Prepended to a download with `bom=true`, for Excel. */
export const UTF8_BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
