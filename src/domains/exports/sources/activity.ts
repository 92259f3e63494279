import { utf8 } from "../../../platform/crypto/encoding";
import type { Database } from "../../../platform/db";
import { plainLines } from "../csv";
import { type ActivityRow, type ActivityTextPageRow, activityRowsPageSql, activityTextPageSql } from "../sql";
import { type ExportSource, keyBy, type RowKey, type SourceScope, type TextPage } from "./source";

export const activity: ExportSource = {
  type: "activity",
  summary: "one row per recorded training-item attempt",
  rangeColumn: "occurred_at",
  order: "by `occurred_at`, then `attempt_id`",
  columns: [
    { name: "attempt_id", description: "The attempt's id (the client's UUID)." },
    { name: "occurred_at", description: "When the learner made the attempt." },
    { name: "user_id", description: "The learner." },
    { name: "course_id", description: "Course of the item." },
    { name: "lesson_id", description: "Lesson of the item." },
    { name: "training_item_id", description: "The training item." },
    { name: "skill", description: "The item's skill." },
    { name: "cefr_level", description: "The item's CEFR level." },
    { name: "score", description: "0–1, three decimals." },
    { name: "correct", description: "`true` or `false`." },
    { name: "duration_seconds", description: "Time spent on the item." },
    { name: "xp_awarded", description: "XP the attempt earned." },
    { name: "recorded_at", description: "When the API recorded it." },
  ],
  page(db, scope, after, limit) {
    return db.values<ActivityRow>(activityRowsPageSql(scope, after, limit));
  },
  key: (row) => activityKey(row),
  text: { page: activityTextPage, lineKey: activityLineKey },
};

/** The activity page as CSV text written by SQLite (sql.ts, activityTextPageSql), or null when it is not plain. */
async function activityTextPage(
  db: Database,
  scope: SourceScope,
  after: RowKey | null,
  limit: number,
): Promise<TextPage | null> {
  const result = await db.get<ActivityTextPageRow>(activityTextPageSql(scope, after, limit));
  const { count, types_ok: typesOk, text } = result;
  if (count === 0) return { bytes: new Uint8Array(0), count: 0 };
  if (typesOk !== 1 || text === null) return null;
  // SQLite appends the last CRLF: `${text}\r\n` here would copy the whole page into a new string.
  const bytes = utf8(text);
  return plainLines(bytes, count, ACTIVITY_COLUMN_COUNT) && inKeyOrder(bytes) ? { bytes, count } : null;
}

function activityLineKey(line: string): RowKey {
  // The line's first two cells: attempt_id, occurred_at (plain cells: no quotes, no commas).
  const idEnd = line.indexOf(",");
  const atEnd = line.indexOf(",", idEnd + 1);
  if (idEnd < 0 || atEnd < 0) throw new Error("an activity line without its key cells");
  return [line.slice(idEnd + 1, atEnd), line.slice(0, idEnd)];
}

/** Lines of the text page: the columns of `activity` (csv.ts checks each line has them all). */
const ACTIVITY_COLUMN_COUNT = activity.columns.length;
const activityKey = keyBy(activity.columns, ["occurred_at", "attempt_id"]);

/**
 * Whether plain activity lines are in export order, (occurred_at, id) ascending, compared as SQLite
 * compares text (bytes). SQLite concatenates the rows in the order the page's subquery yields them,
 * which is that order, but only an ORDER BY inside group_concat would promise it — and sorting the
 * page again costs about 0.6 s per million rows here — so the order is checked instead (a page out
 * of order is read as rows). The first cell is the id, the second occurred_at.
 */
export function inKeyOrder(bytes: Uint8Array): boolean {
  let previous = -1; // start of the previous line
  let previousIdEnd = 0;
  let previousAtEnd = 0;
  for (let start = 0; start < bytes.length; ) {
    const idEnd = bytes.indexOf(0x2c, start);
    const atEnd = bytes.indexOf(0x2c, idEnd + 1);
    if (idEnd < 0 || atEnd < 0) return false;
    if (previous >= 0) {
      let order = compareBytes(bytes, previousIdEnd + 1, previousAtEnd, idEnd + 1, atEnd);
      if (order === 0) order = compareBytes(bytes, previous, previousIdEnd, start, idEnd);
      if (order >= 0) return false;
    }
    previous = start;
    previousIdEnd = idEnd;
    previousAtEnd = atEnd;
    start = bytes.indexOf(0x0a, atEnd) + 1;
    if (start === 0) return false;
  }
  return true;
}

function compareBytes(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): number {
  for (; a < aEnd && b < bEnd; a++, b++) {
    const d = (bytes[a] ?? 0) - (bytes[b] ?? 0);
    if (d !== 0) return d;
  }
  return aEnd - a - (bEnd - b);
}
