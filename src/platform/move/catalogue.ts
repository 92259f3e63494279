/**
 * The catalogue's numbering, compared between a move's two databases. The rows kept for good name
 * catalogue rows by number (docs/design/capacity.md, "Integer keys"), and a move copies them as they
 * are: a number must name the same row in the target as in the source, or the moved progress would
 * silently name other items. Every database numbers its catalogue alike (copies carry the number;
 * loads run in the same order); this checks it rather than trusting it. A row only one side has
 * is no conflict: its number names nothing else there.
 */

/** The catalogue's numbered tables. */
const NUMBERED = ["courses", "lessons", "training_items"] as const;
const PAGE_ROWS = 500;

interface NumberedRow {
  id: string;
  number: number;
}

/**
 * Null when no number or id names different rows in the two databases; otherwise the first such
 * conflict, in words.
 */
export async function catalogueNumberingDiffers(
  source: { name: string; d1: D1Database },
  target: { name: string; d1: D1Database },
): Promise<string | null> {
  for (const table of NUMBERED) {
    const page = `SELECT id, number FROM "${table}" WHERE number > ?1 ORDER BY number LIMIT ${PAGE_ROWS}`;
    // The target's rows that share a number or an id with the page's.
    const counterparts = `SELECT id, number FROM "${table}"
      WHERE number IN (SELECT value ->> 'number' FROM json_each(?1))
         OR id IN (SELECT value ->> 'id' FROM json_each(?1))`;
    let after = 0;
    for (;;) {
      const { results: rows } = await source.d1.prepare(page).bind(after).all<NumberedRow>();
      if (rows.length === 0) break;
      const { results: theirs } = await target.d1
        .prepare(counterparts)
        .bind(JSON.stringify(rows))
        .all<NumberedRow>();
      const byNumber = new Map(theirs.map((row) => [row.number, row.id]));
      const byId = new Map(theirs.map((row) => [row.id, row.number]));
      for (const { id, number } of rows) {
        const other = byNumber.get(number);
        if (other !== undefined && other !== id)
          return `${table} number ${number} is ${id} in ${source.name} and ${other} in ${target.name}`;
        const renumbered = byId.get(id);
        if (renumbered !== undefined && renumbered !== number)
          return `${table} ${id} is number ${number} in ${source.name} and ${renumbered} in ${target.name}`;
      }
      const last = rows.at(-1) as NumberedRow;
      if (rows.length < PAGE_ROWS) break;
      after = last.number;
    }
  }
  return null;
}
