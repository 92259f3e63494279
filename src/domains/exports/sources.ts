import { type SQL, sql } from "drizzle-orm";
import type { ExportFilters, ExportType } from "../../db/schema";
import { utf8 } from "../../platform/crypto/encoding";
import { type Database, inJsonList } from "../../platform/db";
import { type Cell, plainLines } from "./csv";

/** Position of a row in its export's order; compared as a tuple. */
export type RowKey = (string | number)[];
export type Row = Cell[];

export interface SourceScope {
  institutionId: string;
  filters: ExportFilters;
  /** The job's creation time: the activity export leaves out attempts recorded after it. */
  asOf: string;
}

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
  page(db: Database, scope: SourceScope, after: RowKey | null, limit: number): Promise<Row[]>;
  key(row: Row): RowKey;
  /**
   * Optionally, the same page with its CSV written by SQLite: one string for the whole page, or
   * null when any row of it needs quoting or the formula guard (then `page` is read instead). The
   * text must be byte for byte what `page` and csv.ts would write for those rows.
   */
  textPage?(db: Database, scope: SourceScope, after: RowKey | null, limit: number): Promise<TextPage | null>;
  /** The key of one line of a text page (without its CRLF). */
  lineKey?(line: string): RowKey;
}

/** A page as CSV text in UTF-8: `count` lines, each ending in CRLF, no cell holding a CR or LF. */
export interface TextPage {
  bytes: Uint8Array;
  count: number;
}

function membersFilter(column: SQL, filters: ExportFilters): SQL | undefined {
  // json_each: one bound parameter for up to 100 ids (D1 binds at most 100 per statement).
  return filters.user_ids?.length ? inJsonList(column, filters.user_ids) : undefined;
}

/**
 * `from` (inclusive) and `to` (exclusive). Where the range column leads the keyset, pass
 * `keyed` once a page has a key: rows after it are past `from` already, and leaving the bound out
 * lets SQLite start the index range at the key instead of at `from` on every page.
 */
function rangeFilter(column: SQL, filters: ExportFilters, keyed = false): SQL[] {
  const out: SQL[] = [];
  if (filters.from && !keyed) out.push(sql`${column} >= ${filters.from}`);
  if (filters.to) out.push(sql`${column} < ${filters.to}`);
  return out;
}

/**
 * The key of a row: its cells under `keyNames`, found among the visible columns and then the key
 * columns the row carries after them (`hiddenKeys`). Every key cell is text or a number.
 */
function keyBy(
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

function where(conditions: (SQL | undefined)[]): SQL {
  return sql.join(
    conditions.filter((c): c is SQL => c !== undefined),
    sql` AND `,
  );
}

const activity: ExportSource = {
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
  async textPage(db, scope, after, limit) {
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
  },
  lineKey(line) {
    // The line's first two cells: attempt_id, occurred_at (plain cells: no quotes, no commas).
    const idEnd = line.indexOf(",");
    const atEnd = line.indexOf(",", idEnd + 1);
    if (idEnd < 0 || atEnd < 0) throw new Error("an activity line without its key cells");
    return [line.slice(idEnd + 1, atEnd), line.slice(0, idEnd)];
  },
};

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

const learnerProgress: ExportSource = {
  type: "learner_progress",
  summary: "one row per learner and course the learner has started",
  rangeColumn: "last_activity_at",
  order: "by `user_id`, then `course_id`",
  columns: [
    { name: "user_id", description: "The learner." },
    { name: "user_email", description: "The learner's e-mail address." },
    { name: "user_name", description: "The learner's name." },
    { name: "course_id", description: "The course." },
    { name: "course_title", description: "The course's title." },
    { name: "progress_percent", description: "Items done of the course's items, 0–100, rounded." },
    { name: "lessons_completed", description: "Lessons of the course completed." },
    { name: "lessons_total", description: "Lessons in the course." },
    { name: "items_done", description: "Training items passed." },
    { name: "items_total", description: "Training items in the course." },
    { name: "xp", description: "XP earned in the course." },
    { name: "cefr_level", description: "The learner's overall CEFR level (empty before A1)." },
    { name: "started_at", description: "First attempt in the course." },
    { name: "completed_at", description: "When the last lesson was completed (empty if not yet)." },
    { name: "last_activity_at", description: "Latest attempt in the course." },
  ],
  page(db, scope, after, limit) {
    const { filters } = scope;
    return db.values<Cell[]>(sql`
      SELECT cp.user_id, u.email, u.name, cp.course_id, c.title,
             CASE WHEN c.item_count > 0 THEN CAST(round(min(cp.items_done, c.item_count) * 100.0 / c.item_count) AS INTEGER) ELSE 0 END,
             cp.lessons_completed, cp.lessons_total, cp.items_done, c.item_count, cp.xp,
             json_extract(ls.cefr_levels, '$.overall'), cp.started_at, cp.completed_at, cp.last_activity_at
      FROM course_progress cp
      LEFT JOIN users u ON u.id = cp.user_id
      LEFT JOIN courses c ON c.id = cp.course_id
      LEFT JOIN learner_stats ls ON ls.user_id = cp.user_id
      WHERE ${where([
        sql`cp.institution_id = ${scope.institutionId}`,
        ...rangeFilter(sql`cp.last_activity_at`, filters),
        filters.course_id ? sql`cp.course_id = ${filters.course_id}` : undefined,
        membersFilter(sql`cp.user_id`, filters),
        after ? sql`(cp.user_id, cp.course_id) > (${after[0]}, ${after[1]})` : undefined,
      ])}
      ORDER BY cp.user_id, cp.course_id
      LIMIT ${limit}`);
  },
  key: (row) => learnerProgressKey(row),
};

const learnerProgressKey = keyBy(learnerProgress.columns, ["user_id", "course_id"]);

/** Sorts after every lesson position: a course's own row follows its lessons. */
const COURSE_ROW = 2_147_483_647;

const completions: ExportSource = {
  type: "completions",
  summary: "one row per completed lesson and per completed course",
  rangeColumn: "completed_at",
  order: "by `user_id`, then `course_id`; within a course its lessons by position, then the course itself",
  columns: [
    { name: "kind", description: "`lesson` or `course`." },
    { name: "user_id", description: "The learner." },
    { name: "user_email", description: "The learner's e-mail address." },
    { name: "user_name", description: "The learner's name." },
    { name: "course_id", description: "The course." },
    { name: "course_title", description: "The course's title." },
    { name: "lesson_id", description: "The lesson (empty on course rows)." },
    { name: "lesson_title", description: "The lesson's title (empty on course rows)." },
    { name: "started_at", description: "First attempt in the lesson or course." },
    { name: "completed_at", description: "When it was completed." },
    { name: "score", description: "Mean best score of the passed items, 0–1, three decimals." },
    { name: "xp", description: "XP earned in the course (course rows only)." },
  ],
  page(db, scope, after, limit) {
    const { filters } = scope;
    // Both arms walk course_progress by (institution, user, course); the keyset condition is
    // written into each arm so that each is an index range, and the ORDER BY merges them.
    const common = (completedAt: SQL) => [
      sql`cp.institution_id = ${scope.institutionId}`,
      sql`${completedAt} IS NOT NULL`,
      ...rangeFilter(completedAt, filters),
      filters.course_id ? sql`cp.course_id = ${filters.course_id}` : undefined,
      membersFilter(sql`cp.user_id`, filters),
    ];
    const afterKey = (seq: SQL) =>
      after ? sql`(cp.user_id, cp.course_id, ${seq}) > (${after[0]}, ${after[1]}, ${after[2]})` : undefined;
    return db.values<Cell[]>(sql`
      WITH page AS (
        SELECT cp.user_id AS user_id, cp.course_id AS course_id, l.position AS seq, 'lesson' AS kind, lp.lesson_id AS lesson_id,
               l.title AS lesson_title, lp.started_at AS started_at, lp.completed_at AS completed_at,
               CASE WHEN lp.items_done > 0 THEN round(lp.score_sum / lp.items_done, 3) END AS score, NULL AS xp
        FROM course_progress cp
        JOIN lesson_progress lp ON lp.user_id = cp.user_id AND lp.course_id = cp.course_id
        JOIN lessons l ON l.id = lp.lesson_id
        WHERE ${where([...common(sql`lp.completed_at`), afterKey(sql`l.position`)])}
        UNION ALL
        SELECT cp.user_id, cp.course_id, ${COURSE_ROW}, 'course', NULL, NULL, cp.started_at, cp.completed_at,
               (SELECT round(sum(s.score_sum) / sum(s.items_done), 3) FROM lesson_progress s
                 WHERE s.user_id = cp.user_id AND s.course_id = cp.course_id AND s.items_done > 0),
               cp.xp
        FROM course_progress cp
        WHERE ${where([...common(sql`cp.completed_at`), afterKey(sql`${COURSE_ROW}`)])}
        ORDER BY 1, 2, 3
        LIMIT ${limit}
      )
      SELECT page.kind, page.user_id, u.email, u.name, page.course_id, c.title, page.lesson_id, page.lesson_title,
             page.started_at, page.completed_at, page.score, page.xp, page.seq
      FROM page
      LEFT JOIN users u ON u.id = page.user_id
      LEFT JOIN courses c ON c.id = page.course_id
      ORDER BY page.user_id, page.course_id, page.seq`);
  },
  key: (row) => completionsKey(row),
};

/** The position within a course (lesson position, or COURSE_ROW) follows the visible cells. */
const completionsKey = keyBy(completions.columns, ["user_id", "course_id", "seq"], ["seq"]);

export const SOURCES: Record<ExportType, ExportSource> = {
  learner_progress: learnerProgress,
  completions,
  activity,
};
