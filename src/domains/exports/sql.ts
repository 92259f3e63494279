import { type SQL, sql } from "drizzle-orm";
import { courseNumberOf, userNumberOf } from "../../db/numbers";
import type { attempts, courseProgress, courses, ExportFilters, lessons, users } from "../../db/schema";
import { inJsonList } from "../../platform/db";

/**
 * The exports domain's raw SQL: the keyset page of each export type (sources/), read a page at a
 * time by the generation. Each page is one index range walk, so a page costs the same at row 10 and
 * at row 10,000,000. The statements take the job's scope (institution, filters, creation time), the
 * key of the last row already written (`after`, null for the first page) and the page size; their
 * conditions depend on the filters, so each is a function building one drizzle `sql` statement.
 * The rows come back as arrays (`db.values`) of the export's visible cells in column order, then
 * any key column that is not visible.
 */

/** Which rows a page statement reads: the job's institution, its filters and its creation time. */
export interface SourceScope {
  institutionId: string;
  filters: ExportFilters;
  /** The job's creation time: the activity export leaves out attempts recorded after it. */
  asOf: string;
}

/** Position of a row in its export's order (the key of the last row written); compared as a tuple. */
export type RowKey = (string | number)[];

type Attempt = typeof attempts.$inferSelect;
type CourseProgress = typeof courseProgress.$inferSelect;
type Lesson = typeof lessons.$inferSelect;
type Course = typeof courses.$inferSelect;
type User = typeof users.$inferSelect;

/** The conditions that are there, joined with AND. */
export function where(conditions: (SQL | undefined)[]): SQL {
  return sql.join(
    conditions.filter((c): c is SQL => c !== undefined),
    sql` AND `,
  );
}

export function membersFilter(column: SQL, filters: ExportFilters): SQL | undefined {
  // json_each: one bound parameter for up to 100 ids (D1 binds at most 100 per statement).
  return filters.user_ids?.length ? inJsonList(column, filters.user_ids) : undefined;
}

/**
 * `from` (inclusive) and `to` (exclusive). Where the range column leads the keyset, pass
 * `keyed` once a page has a key: rows after it are past `from` already, and leaving the bound out
 * lets SQLite start the index range at the key instead of at `from` on every page.
 */
export function rangeFilter(column: SQL, filters: ExportFilters, keyed = false): SQL[] {
  const out: SQL[] = [];
  if (filters.from && !keyed) out.push(sql`${column} >= ${filters.from}`);
  if (filters.to) out.push(sql`${column} < ${filters.to}`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// learner_progress

/**
 * One row per learner and course started in the institution, by (user, course): the
 * `learner_progress` export's page, on the index (institution, user, course). `LearnerProgressRow`s.
 */
export function learnerProgressPageSql(scope: SourceScope, after: RowKey | null, limit: number): SQL {
  const { filters } = scope;
  return sql`
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
      LIMIT ${limit}`;
}
/** The `learner_progress` columns (users and courses joined LEFT: null if gone); the percent is computed. */
export type LearnerProgressRow = [
  userId: CourseProgress["userId"],
  email: User["email"] | null,
  name: User["name"] | null,
  courseId: CourseProgress["courseId"],
  courseTitle: Course["title"] | null,
  progressPercent: number,
  lessonsCompleted: CourseProgress["lessonsCompleted"],
  lessonsTotal: CourseProgress["lessonsTotal"],
  itemsDone: CourseProgress["itemsDone"],
  itemsTotal: Course["itemCount"] | null,
  xp: CourseProgress["xp"],
  cefrLevel: string | null,
  startedAt: CourseProgress["startedAt"],
  completedAt: CourseProgress["completedAt"],
  lastActivityAt: CourseProgress["lastActivityAt"],
];

// ---------------------------------------------------------------------------------------------
// completions

/** Sorts after every lesson position: a course's own row follows its lessons. */
export const COURSE_ROW = 2_147_483_647;

/**
 * One row per completed lesson and per completed course, by (user, course, position) with a
 * course's own row (position COURSE_ROW) after its lessons: the `completions` export's page.
 * `CompletionsRow`s; the position (`seq`) is the hidden key column.
 */
export function completionsPageSql(scope: SourceScope, after: RowKey | null, limit: number): SQL {
  const { filters } = scope;
  // Both arms walk course_progress by (institution, user, course); the keyset condition is
  // written into each arm so that each is an index range, and the ORDER BY merges them.
  // lesson_progress is stored by numbers (docs/design/capacity.md, "Integer keys"): a learner's
  // lessons of a course are a range of its course index, named because without statistics SQLite
  // walks all of the learner's lessons on the key instead.
  const common = (completedAt: SQL) => [
    sql`cp.institution_id = ${scope.institutionId}`,
    sql`${completedAt} IS NOT NULL`,
    ...rangeFilter(completedAt, filters),
    filters.course_id ? sql`cp.course_id = ${filters.course_id}` : undefined,
    membersFilter(sql`cp.user_id`, filters),
  ];
  const afterKey = (seq: SQL) =>
    after ? sql`(cp.user_id, cp.course_id, ${seq}) > (${after[0]}, ${after[1]}, ${after[2]})` : undefined;
  return sql`
      WITH page AS (
        SELECT cp.user_id AS user_id, cp.course_id AS course_id, l.position AS seq, 'lesson' AS kind, l.id AS lesson_id,
               l.title AS lesson_title, lp.started_at AS started_at, lp.completed_at AS completed_at,
               CASE WHEN lp.items_done > 0 THEN round(lp.score_sum / lp.items_done, 3) END AS score, NULL AS xp
        FROM course_progress cp
        JOIN lesson_progress lp INDEXED BY lesson_progress_course_idx ON lp.user_number = ${userNumberOf(sql`cp.user_id`)}
          AND lp.course_number = ${courseNumberOf(sql`cp.course_id`)}
        JOIN lessons l ON l.number = lp.lesson_number
        WHERE ${where([...common(sql`lp.completed_at`), afterKey(sql`l.position`)])}
        UNION ALL
        SELECT cp.user_id, cp.course_id, ${COURSE_ROW}, 'course', NULL, NULL, cp.started_at, cp.completed_at,
               (SELECT round(sum(s.score_sum) / sum(s.items_done), 3) FROM lesson_progress s INDEXED BY lesson_progress_course_idx
                 WHERE s.user_number = ${userNumberOf(sql`cp.user_id`)}
                   AND s.course_number = ${courseNumberOf(sql`cp.course_id`)} AND s.items_done > 0),
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
      ORDER BY page.user_id, page.course_id, page.seq`;
}
/** The `completions` columns, then the hidden `seq` (lesson position, or COURSE_ROW). */
export type CompletionsRow = [
  kind: "lesson" | "course",
  userId: CourseProgress["userId"],
  email: User["email"] | null,
  name: User["name"] | null,
  courseId: CourseProgress["courseId"],
  courseTitle: Course["title"] | null,
  lessonId: Lesson["id"] | null,
  lessonTitle: Lesson["title"] | null,
  startedAt: string,
  completedAt: string,
  score: number | null,
  xp: CourseProgress["xp"] | null,
  seq: number,
];

// ---------------------------------------------------------------------------------------------
// activity

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

/** The keyset page of attempts both activity statements read: `columns` of the next `limit` rows after `after`. */
function activityPage(columns: SQL, scope: SourceScope, after: RowKey | null, limit: number): SQL {
  return sql`SELECT ${columns} FROM attempts WHERE ${activityWhere(scope, after)} ORDER BY occurred_at, id LIMIT ${limit}`;
}

/**
 * One row per attempt recorded up to the job's creation, by (occurred_at, id), on the index
 * (institution, occurred_at, id): the `activity` export's page as rows. `ActivityRow`s.
 */
export function activityRowsPageSql(scope: SourceScope, after: RowKey | null, limit: number): SQL {
  return activityPage(
    sql.raw(`id, occurred_at, user_id, course_id, lesson_id, training_item_id, skill, cefr_level,
          round(score, 3), ${CORRECT_TEXT}, duration_seconds, xp_awarded, recorded_at`),
    scope,
    after,
    limit,
  );
}
/**
 * `[score, round(score, 3)]` for each score: archived attempts (progress/cold-tier) get their score
 * rounded by SQLite, exactly as the D1 page rounds it. The scores travel as one JSON array.
 */
export function roundedScoresSql(scores: readonly number[]): SQL {
  return sql`SELECT value, round(value, 3) FROM json_each(${JSON.stringify(scores)})`;
}

/** The `activity` columns: the score rounded to thousandths, `correct` as `true`/`false`. */
export type ActivityRow = [
  attemptId: Attempt["id"],
  occurredAt: Attempt["occurredAt"],
  userId: Attempt["userId"],
  courseId: Attempt["courseId"],
  lessonId: Attempt["lessonId"],
  trainingItemId: Attempt["trainingItemId"],
  skill: Attempt["skill"],
  cefrLevel: Attempt["cefrLevel"],
  score: Attempt["score"],
  correct: "true" | "false",
  durationSeconds: Attempt["durationSeconds"],
  xpAwarded: Attempt["xpAwarded"],
  recordedAt: Attempt["recordedAt"],
];

/*
 * The activity export's lines written by SQLite (see ExportSource.text). Its cells are ids,
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

/**
 * The same page as `activityRowsPageSql`, as one row: the number of attempts, whether every one of
 * them has plain types (`types_ok` 1), and their CSV lines joined by SQLite, each ending in CRLF
 * (null on an empty page). `ActivityTextPageRow`.
 */
export function activityTextPageSql(scope: SourceScope, after: RowKey | null, limit: number): SQL {
  return sql`
      SELECT count(*) AS count, min(${ACTIVITY_TYPES_OK}) AS types_ok,
             group_concat(${ACTIVITY_LINE}, char(13, 10)) || char(13, 10) AS text
      FROM (${activityPage(
        sql`id, occurred_at, user_id, course_id, lesson_id, training_item_id, skill, cefr_level,
          ${ACTIVITY_THOUSANDTHS} AS k, correct, duration_seconds, xp_awarded, recorded_at`,
        scope,
        after,
        limit,
      )})`;
}
/** Computed by SQLite: the page's size, its type check and its text. */
export interface ActivityTextPageRow {
  count: number;
  types_ok: number | null;
  text: string | null;
}
