import type { ExportType } from "../../../db/schema";
import type { ServiceContext } from "../../../platform/service/context";
import type { Cell } from "../csv";
import type { RowKey, SourceScope } from "../sql";

export type { RowKey, SourceScope };
export type Row = Cell[];

export interface ExportColumn {
  name: string;
  description: string;
}

/**
 * One export type: its CSV columns and a keyset query that returns the rows after a key, in a
 * stable order, `limit` at a time. Each query is one index range walk, so a page costs the same at
 * row 10 and at row 10,000,000. Rows carry the visible columns first, then any key columns that
 * are not visible (cut off when the row is written).
 */
export interface ExportSource {
  type: ExportType;
  summary: string;
  /** Which timestamp `from`/`to` filter on. */
  rangeColumn: string;
  order: string;
  columns: readonly ExportColumn[];
  page(ctx: ServiceContext, scope: SourceScope, after: RowKey | null, limit: number): Promise<Row[]>;
  key(row: Row): RowKey;
  /**
   * Optionally, the same page with its CSV written by SQLite: one string for the whole page, or
   * null when any row of it needs quoting or the formula guard (then `page` is read instead). The
   * text must be byte for byte what `page` and csv.ts would write for those rows.
   */
  text?: {
    page(
      ctx: ServiceContext,
      scope: SourceScope,
      after: RowKey | null,
      limit: number,
    ): Promise<TextPage | null>;
    /** The key of one line of a text page (without its CRLF). */
    lineKey(line: string): RowKey;
  };
}

/** A page as CSV text in UTF-8: `count` lines, each ending in CRLF, no cell holding a CR or LF. */
export interface TextPage {
  bytes: Uint8Array;
  count: number;
}

/**
 * The key of a row: its cells under `keyNames`, found among the visible columns and then the key
 * columns the row carries after them (`hiddenKeys`). Every key cell is text or a number.
 */
export function keyBy(
  columns: readonly ExportColumn[],
  keyNames: readonly string[],
  hiddenKeys: readonly string[] = [],
) {
  const names = [...columns.map((c) => c.name), ...hiddenKeys];
  const positions = keyNames.map((name) => {
    const position = names.indexOf(name);
    if (position < 0) throw new Error(`no column ${name} to key on`);
    return position;
  });
  return (row: Row): RowKey => positions.map((position) => keyCell(row[position]));
}

function keyCell(cell: Cell | undefined): string | number {
  if (typeof cell === "string" || typeof cell === "number") return cell;
  throw new Error(`a key cell holds ${String(cell)}, not text or a number`);
}
