import { type Options, stringify } from "csv-stringify/sync";

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
    if (
      typeof cell === "string"
        ? NEEDS_LIBRARY.test(cell)
        : cell !== null && typeof cell !== "number" && typeof cell !== "boolean" && cell !== undefined
    ) {
      return stringify([row as Cell[]], { ...CSV_OPTIONS, columns: columnIndexes(width) });
    }
  }
  return `${(row.length === width ? row : row.slice(0, width)).join(",")}\r\n`;
}

/**
 * Whether UTF-8 CSV text of `count` lines, each ending in CRLF, is what csv.ts writes when every one
 * of its cells is plain text or a number: `columns` cells a line (exactly `columns - 1` commas, so
 * no comma inside a cell), no quote, no CR or LF but the line ends, no NUL, and no cell starting with
 * a sign the formula guard acts on (NEEDS_LIBRARY's `= + - @`, tab and their full-width forms; a
 * negative number is refused too, which only sends its page down the slower path). One pass over
 * the bytes.
 */
export function plainLines(bytes: Uint8Array, count: number, columns: number): boolean {
  const length = bytes.length;
  if (length === 0) return count === 0;
  if (!plainLead(bytes, 0)) return false;
  let commas = 0;
  let lineEnds = 0;
  // Nearly every byte is none of the five that matter: one table look-up each, in one pass.
  for (let i = 0; i < length; i++) {
    // Always a byte here (i < length); a missing one would read as NUL, which is never plain.
    const b = bytes[i] ?? 0;
    if (NOTABLE[b] === 0) continue;
    if (b === 0x2c) {
      commas++;
      if (!plainLead(bytes, i + 1)) return false;
    } else if (b === 0x0a) {
      lineEnds++;
      if (i + 1 < length && !plainLead(bytes, i + 1)) return false;
    } else if (b === 0x0d) {
      if (bytes[i + 1] !== 0x0a) return false;
    } else {
      return false; // a quote or NUL
    }
  }
  return lineEnds === count && commas === count * (columns - 1) && bytes[length - 1] === 0x0a;
}

/** Comma, LF, CR, quote and NUL. */
const NOTABLE = new Uint8Array(256);
for (const b of [0x2c, 0x0a, 0x0d, 0x22, 0x00]) NOTABLE[b] = 1;

/** Whether the cell starting at `i` starts with none of the signs the formula guard acts on. */
function plainLead(bytes: Uint8Array, i: number): boolean {
  const b = bytes[i];
  if (b === 0x3d || b === 0x2b || b === 0x2d || b === 0x40 || b === 0x09) return false;
  // U+FF1D, U+FF0B, U+FF0D, U+FF20 in UTF-8: EF BC 9D / 8B / 8D / A0.
  if (b === 0xef && bytes[i + 1] === 0xbc) {
    const c = bytes[i + 2];
    if (c === 0x9d || c === 0x8b || c === 0x8d || c === 0xa0) return false;
  }
  return true;
}

/** Rows → their lines (see csvLine). */
export function csvLines(rows: readonly (readonly Cell[])[], width: number): string[] {
  return rows.map((row) => csvLine(row, width));
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
