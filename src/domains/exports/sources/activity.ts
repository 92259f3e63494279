import { type SQL, sql } from "drizzle-orm";
import { utf8 } from "../../../platform/crypto/encoding";
import type { Database } from "../../../platform/db";
import { type Cell, plainLines } from "../csv";
import {
  type ExportSource,
  keyBy,
  membersFilter,
  type RowKey,
  rangeFilter,
  type SourceScope,
  type TextPage,
  where,
} from "./source";

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
    return db.values<Cell[]>(
      activityPage(
        sql.raw(`id, occurred_at, user_id, course_id, lesson_id, training_item_id, skill, cefr_level,
          round(score, 3), ${CORRECT_TEXT}, duration_seconds, xp_awarded, recorded_at`),
        scope,
        after,
        limit,
      ),
    );
  },
  key: (row) => activityKey(row),
  text: { page: activityTextPage, lineKey: activityLineKey },
};

/** The activity page as CSV text written by SQLite (see ACTIVITY_LINE below), or null when it is not plain. */
async function activityTextPage(
  db: Database,
  scope: SourceScope,
  after: RowKey | null,
  limit: number,
): Promise<TextPage | null> {
  const result = await db.get<{ count: number; types_ok: number | null; text: string | null }>(sql`
      SELECT count(*) AS count, min(${ACTIVITY_TYPES_OK}) AS types_ok,
             group_concat(${ACTIVITY_LINE}, char(13, 10)) || char(13, 10) AS text
      FROM (${activityPage(
        sql`id, occurred_at, user_id, course_id, lesson_id, training_item_id, skill, cefr_level,
          ${ACTIVITY_THOUSANDTHS} AS k, correct, duration_seconds, xp_awarded, recorded_at`,
        scope,
        after,
        limit,
      )})`);
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

/** The keyset page of attempts both activity paths read: `columns` of the next `limit` rows after `after`. */
function activityPage(columns: SQL, scope: SourceScope, after: RowKey | null, limit: number): SQL {
  return sql`SELECT ${columns} FROM attempts WHERE ${activityWhere(scope, after)} ORDER BY occurred_at, id LIMIT ${limit}`;
}

/** `correct` as the CSV writes a boolean. */
const CORRECT_TEXT = "CASE correct WHEN 0 THEN 'false' ELSE 'true' END";

function activityWhere(scope: SourceScope, after: RowKey | null): SQL {
  const { filters } = scope;
  return where([
    sql`institution_id = ${scope.institutionId}`,
    sql`recorded_at <= ${scope.asOf}`,
    ...rangeFilter(sql`occurred_at`, filters, after !== null),
    filters.course_id ? sql`course_id = ${filters.course_id}` : undefined,
    membersFilter(sql`user_id`, filters),
    after ? sql`(occurred_at, id) > (${after[0]}, ${after[1]})` : undefined,
  ]);
}

/*
 * The activity export's lines written by SQLite (see ExportSource.textPage). Its cells are ids,
 * timestamps, enums and numbers, so nearly every row is plain — no quoting, no guard — and its line
 * is the cells joined by commas. Locally, D1 hands a page over as one string far more cheaply than as
 * 5,000 rows of 13 values (about 2 µs a row), so SQLite joins the cells and the page's lines.
 *
 * The page is used only if its lines are in key order (inKeyOrder) and it is byte for byte what
 * csv.ts would write for its rows (a test checks
 * this): here, every text cell is text (not a blob, not null) and every integer a JavaScript-safe
 * integer, and the score — `round(score, 3)`, which in [0, 1] is one of 1,001 values — is printed as
 * JavaScript prints it (1.0 → "1", 0.5 → "0.5", -0.0 → "0"; a test checks all of them) from its
 * thousandths, an integer (SQLite's own printing of a REAL differs: 1.0 → "1.0"); the thousandths
 * are those of `round(score, 3)` (see ACTIVITY_THOUSANDTHS). Then plainLines
 * checks the text for quotes, stray line breaks, commas inside cells and the formula guard's signs.
 * Any other page is read again as rows and written by csv.ts.
 */
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
const ACTIVITY_TEXT_COLUMNS = [
  "id",
  "occurred_at",
  "user_id",
  "course_id",
  "lesson_id",
  "training_item_id",
  "skill",
  "cefr_level",
  "recorded_at",
];
// 1 or 0, never NULL (min() would skip a NULL).
const ACTIVITY_TYPES_OK = sql.raw(
  `CASE WHEN ${[
    ...ACTIVITY_TEXT_COLUMNS.map((c) => `typeof(${c}) = 'text'`),
    ...["duration_seconds", "xp_awarded"].map((c) => `typeof(${c}) = 'integer' AND ${c} <= 9007199254740991`),
    "k BETWEEN 0 AND 1000",
  ].join(" AND ")} THEN 1 ELSE 0 END`,
);
/*
 * The score's thousandths as `round(score, 3)` gives them: CAST(round(score, 3) * 1000 + 1000.5 AS
 * INTEGER) - 1000, so -0.0 → 0 and anything outside [0, 1] falls outside [0, 1000] (NULL stays NULL).
 * round(x, 3) prints x with printf("%.3f") and parses the text back, about 0.4 µs a row here, a
 * twentieth of the export's time. A score in [0, 1] whose score × 1000 is not within 1e-6 of a
 * half (.5) has the same thousandths as floor(score × 1000 + 0.5): the double arithmetic is off by
 * less than 1e-12 there and printf's decimal digits by less still, so both round to the same
 * integer. Only the others (a tie such as 0.0625, or a value a hair from one, also outside [0, 1])
 * are left to round() itself. A test checks ties, near-ties and random scores against round().
 */
const ACTIVITY_THOUSANDTHS = sql.raw(`CASE
  WHEN score * 1000 - CAST(score * 1000 AS INTEGER) BETWEEN 0.499999 AND 0.500001 OR NOT score BETWEEN 0 AND 1
  THEN CAST(round(score, 3) * 1000 + 1000.5 AS INTEGER) - 1000
  ELSE CAST(score * 1000 + 0.5 AS INTEGER) END`);
const ACTIVITY_LINE =
  sql.raw(`concat_ws(',', id, occurred_at, user_id, course_id, lesson_id, training_item_id, skill, cefr_level,
  CASE WHEN k = 0 THEN '0' WHEN k = 1000 THEN '1' ELSE '0.' || rtrim(substr(k + 1000, 2), '0') END,
  ${CORRECT_TEXT}, duration_seconds, xp_awarded, recorded_at)`);
