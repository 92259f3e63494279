import { stringify, type Options } from "csv-stringify/sync";

/**
 * CSV per CONVENTIONS.md: RFC 4180 (comma, `"` quoting, CRLF), UTF-8, and the formula-injection
 * guard. Quoting is csv-stringify's; so is the guard for cells starting with `=`, `+`, `-`, `@`, tab
 * or carriage return (`escape_formulas`, which leaves numbers such as -3 alone, and also guards the
 * full-width forms of those signs). NUL, which our conventions add and the library does not check,
 * is guarded by the string cast below.
 */
export const CSV_OPTIONS: Options = {
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
 * A text cell the library would change: one holding the delimiter, a quote or a line break, or one
 * starting with a formula sign (or NUL). Every other cell the library writes exactly as it is.
 */
const NEEDS_LIBRARY = /[",\r\n]|^[=+\-@\t\r\0\uFF1D\uFF0B\uFF0D\uFF20]/;

/**
 * One row → its CSV line, ending in CRLF; only the first `width` cells are written (sources append
 * their keyset columns after the visible ones).
 *
 * Most rows are ids, timestamps and numbers that need no quoting and no guard, and csv-stringify
 * costs about 3.5 µs a row in workerd against 0.4 µs for joining the cells — the difference between
 * meeting and missing the export's throughput goal. So a row whose every cell is plain (null, a
 * number, a boolean, or text the library would leave as is) is joined directly, which is
 * byte-for-byte what the library writes for it (a test checks this on random rows); any other row
 * is written by the library.
 */
export function csvLine(row: readonly Cell[], width: number): string {
  for (let i = 0; i < width; i++) {
    const cell = row[i];
    if (typeof cell === "string" ? NEEDS_LIBRARY.test(cell) : cell !== null && typeof cell !== "number" && typeof cell !== "boolean" && cell !== undefined) {
      return stringify([row as Cell[]], { ...CSV_OPTIONS, columns: columnIndexes(width) });
    }
  }
  return (row.length === width ? row : row.slice(0, width)).join(",") + "\r\n";
}

/** Rows → their lines (see csvLine). */
export function csvLines(rows: readonly (readonly Cell[])[], width: number): string[] {
  const lines = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) lines[i] = csvLine(rows[i]!, width);
  return lines;
}

/** Rows → CSV text, each row ending in CRLF. */
export function csvRows(rows: readonly (readonly Cell[])[], width: number): string {
  return csvLines(rows, width).join("");
}

/** The header line. */
export function csvHeader(names: readonly string[]): string {
  return stringify([names as string[]], CSV_OPTIONS);
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
