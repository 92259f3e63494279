import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { courseNumberOf, institutionNumberOf, userNumberOf } from "../../../db/numbers";
import type { courses } from "../../../db/schema";
import { type Granularity, periodStartSql } from "./range";

/**
 * The analytics' raw SQL. The whole institution is answered from the rollups the triggers of the
 * `…_institution_analytics_triggers` migration keep (institution_member_counts, institution_cefr_counts,
 * institution_activity_totals, institution_learner_courses): `rollupStatement`,
 * whose work grows with members and periods, not with learner-days. One group (`group=`) is answered
 * from its members' own rows: `groupMembersStatement` and `groupActivityStatement`, which read only
 * that group's members. SQLite computes every column, so the row types are written out next to each
 * statement.
 */

export const TOP_COURSES = 10;

export interface Filter {
  institutionId: string;
  from: string;
  to: string;
  group: string | null;
}

/**
 * The institution's revisions (institution_analytics_revisions: `''` for its members, `YYYY-MM` per
 * month of activity) as a column of its row: JSON `[[month, revision], …]`, one row per month with activity.
 */
export function revisionsColumn(institutionId: SQLiteColumn): SQL<string> {
  return sql<string>`(SELECT json_group_array(json_array(month, revision)) FROM institution_analytics_revisions
    WHERE institution_id = ${institutionId})`;
}

// --- the whole institution, from the rollups ----------------------------------------------------

/**
 * How a range is read from the rollups: `days`, the day intervals read from day rows, and `months`,
 * the whole months inside the range read from month rows (sums of courses and groups); `firstEdge` and
 * `lastEdge`, the parts of the range in a first or last period it covers only partly (distinct
 * learners of those are counted from the learners' pairs; whole periods from their counters).
 */
export interface RollupPlan {
  institutionId: string;
  from: string;
  to: string;
  granularity: Granularity;
  /** First day of the first period (the week or month holding `from`). */
  firstPeriod: string;
  days: [string, string][];
  months: string[];
  firstEdge: [string, string] | null;
  lastEdge: [string, string] | null;
}

/** Course or group rows of a plan: its day intervals' day rows and its whole months' month rows. */
function scopedRows(plan: RollupPlan, scope: "course" | "group"): SQL {
  const columns = sql.raw("key, attempts, seconds, xp, lessons_completed, courses_completed");
  const parts: SQL[] = [
    ...plan.days.map(
      ([a, b]) =>
        sql`SELECT ${columns} FROM institution_activity_totals WHERE institution_id = ${plan.institutionId}
          AND scope = ${scope} AND period >= ${`d:${a}`} AND period <= ${`d:${b}`}`,
    ),
    ...(plan.months.length > 0
      ? [
          sql`SELECT ${columns} FROM institution_activity_totals WHERE institution_id = ${plan.institutionId}
          AND scope = ${scope} AND period IN (${sql.join(
            plan.months.map((m) => sql`${`m:${m}`}`),
            sql`, `,
          )})`,
        ]
      : []),
  ];
  return sql.join(parts, sql` UNION ALL `);
}

/** Course or group sums over a plan, per key, as a JSON array. */
function scopedSums(plan: RollupPlan, scope: "course" | "group"): SQL {
  return sql`(SELECT json_group_array(json_array(key, a, s, x, l, c)) FROM (
    SELECT key, sum(attempts) AS a, sum(seconds) AS s, sum(xp) AS x, sum(lessons_completed) AS l,
      sum(courses_completed) AS c
    FROM (${scopedRows(plan, scope)}) GROUP BY key))`;
}

/**
 * Is there a day of (learner[, course]) in [a, b]: one probe, its b-tree named (without statistics
 * SQLite may pick the other one): the pair's index, or for a learner the table's key (institution,
 * learner, day, course), which `NOT INDEXED` names in a WITHOUT ROWID table. The table is keyed by
 * numbers; the pairs name ids: each number is a seek on its table's key.
 */
function probe(plan: RollupPlan, pair: boolean, a: string, b: string): SQL {
  const course = pair ? sql` AND r.course_number = ${courseNumberOf(sql`p.course_id`)}` : sql``;
  const index = sql.raw(pair ? "INDEXED BY institution_activity_days_user_course_idx" : "NOT INDEXED");
  return sql`EXISTS (SELECT 1 FROM institution_activity_days r ${index}
    WHERE r.institution_number = ${institutionNumberOf(plan.institutionId)}
    AND r.user_number = ${userNumberOf(sql`p.user_id`)}${course} AND r.day >= ${a} AND r.day <= ${b})`;
}

/**
 * Whether a learner active in the range has a day in [a, b] (a partial first or last period), from
 * their first (`f`) and last (`l`) day over the range's pairs — each an active day — and a probe only
 * when those lie on both sides of it.
 */
function edgeFlag(plan: RollupPlan, edge: [string, string] | null, side: "first" | "last"): SQL {
  if (!edge) return sql`0`;
  const [a, b] = edge;
  return side === "first"
    ? sql`CASE WHEN NOT p.active THEN 0 WHEN p.f >= ${a} THEN p.f <= ${b} WHEN p.l <= ${b} THEN 1 ELSE ${probe(plan, false, a, b)} END`
    : sql`CASE WHEN NOT p.active THEN 0 WHEN p.l <= ${b} THEN p.l >= ${a} WHEN p.f >= ${a} THEN 1 ELSE ${probe(plan, false, a, b)} END`;
}

/**
 * Everything the whole institution's answer needs, from the rollups only, as one row of JSON columns
 * (D1 allows 5 terms in a compound SELECT; scalar subqueries have no such bound):
 * - `members`: `[[group, members, learners]]`, the institution's own row under group `''`;
 * - `cefr`: `[[key, level, learners]]`, key `overall` or a skill;
 * - `days`: `[[day, learners, attempts, seconds, xp, lessons, courses]]`, the institution's day rows;
 * - `periods`: `[[first day, learners]]`, week or month rows (distinct learners of each whole period);
 * - `courses`, `groups`: `[[key, attempts, seconds, xp, lessons, courses]]`, sums per course and per
 *   group (its members now), from day rows at the range's ends and month rows in between;
 * - `learners`: `[[groups, courses, learners, of the first partial period, of the last]]`: the learners
 *   active in the range per list of their groups and list of the courses they were active in (both
 *   U+001F-separated), so that one pass over the pairs counts the range, its partial periods, each
 *   group and each course (the worker adds the lists up);
 * - `titles`: `[[course, title, slug]]` of the courses with activity in the range.
 * Distinct learners come from one row per (learner, course) pair with activity, walked once in
 * (learner, course) order, and a probe of `institution_activity_days` only for a pair (or a learner,
 * for a partial period) whose first and last day lie on both sides of what is asked.
 */
export function rollupStatement(plan: RollupPlan): SQL {
  const { institutionId: id, from, to } = plan;
  const periods =
    plan.granularity === "day"
      ? sql`'[]'`
      : sql`(SELECT json_group_array(json_array(substr(period, 3), learners)) FROM institution_activity_totals
          WHERE institution_id = ${id} AND scope = 'all'
            AND period >= ${`${plan.granularity[0]}:${plan.firstPeriod}`} AND period <= ${`${plan.granularity[0]}:${to}`})`;
  return sql`
    WITH learners AS (
      SELECT p.groups, p.courses, p.active, ${edgeFlag(plan, plan.firstEdge, "first")} AS first_edge,
        ${edgeFlag(plan, plan.lastEdge, "last")} AS last_edge
      FROM (
        SELECT p.user_id, max(p.groups) AS groups, min(p.first_day) AS f, max(p.last_day) AS l, max(p.active) AS active,
          group_concat(CASE WHEN p.active THEN p.course_id END, char(31)) AS courses
        FROM (
          SELECT p.user_id, p.course_id, p.groups, p.first_day, p.last_day,
            CASE WHEN p.first_day >= ${from} OR p.last_day <= ${to} THEN 1 ELSE ${probe(plan, true, from, to)} END AS active
          FROM institution_learner_courses p
          WHERE p.institution_id = ${id} AND p.first_day <= ${to} AND p.last_day >= ${from}) p
        GROUP BY p.user_id) p)
    SELECT
      (SELECT json_group_array(json_array(group_name, members, learners)) FROM institution_member_counts
        WHERE institution_id = ${id} AND (group_name = '' OR members > 0)) AS members,
      (SELECT json_group_array(json_array(skill, level, learners)) FROM institution_cefr_counts
        WHERE institution_id = ${id} AND learners > 0) AS cefr,
      (SELECT json_group_array(json_array(substr(period, 3), learners, attempts, seconds, xp, lessons_completed,
          courses_completed)) FROM institution_activity_totals
        WHERE institution_id = ${id} AND scope = 'all' AND period >= ${`d:${from}`} AND period <= ${`d:${to}`}) AS days,
      ${periods} AS periods,
      ${scopedSums(plan, "course")} AS courses,
      ${scopedSums(plan, "group")} AS groups,
      (SELECT json_group_array(json_array(groups, courses, n, e1, e2)) FROM (
        SELECT groups, courses, count(*) AS n, sum(first_edge) AS e1, sum(last_edge) AS e2
        FROM learners WHERE active GROUP BY groups, courses)) AS learners,
      (SELECT json_group_array(json_array(id, title, slug)) FROM courses
        WHERE id IN (SELECT key FROM (${scopedRows(plan, "course")}))) AS titles`;
}

/** The row of `rollupStatement`: every column is JSON text, as described there. */
export interface RollupRow {
  members: string;
  cefr: string;
  days: string;
  periods: string;
  courses: string;
  groups: string;
  learners: string;
  titles: string;
}

/** The separator of a learner's groups in `institution_learner_courses.groups` (U+001F). */
export const GROUPS_SEPARATOR = "\u001f";

// --- one group, from its members' rows ------------------------------------------------------------

/**
 * One group's members now — their count, the learners' CEFR levels from learner_stats (one row per
 * learner, kept by every recording) — as one row of JSON columns; `groups`: the group and its count.
 */
export function groupMembersStatement(filter: Filter & { group: string }): SQL {
  const inGroup = sql`u.id IN (SELECT user_id FROM member_groups WHERE institution_id = ${filter.institutionId} AND group_name = ${filter.group})`;
  return sql`
    SELECT
      (SELECT count(*) FROM users u WHERE u.institution_id = ${filter.institutionId} AND ${inGroup}) AS members,
      (SELECT count(*) FROM users u WHERE u.institution_id = ${filter.institutionId} AND u.role = 'learner' AND ${inGroup}) AS learners,
      (SELECT json_group_array(json_array(k, v, n)) FROM (
        SELECT je.key AS k, je.value AS v, count(*) AS n
        FROM users u JOIN learner_stats ls ON ls.user_id = u.id, json_each(ls.cefr_levels) je
        WHERE u.institution_id = ${filter.institutionId} AND u.role = 'learner' AND ${inGroup}
        GROUP BY je.key, je.value)) AS cefr`;
}

/** `cefr`: JSON `[[key, level, learners], …]` (key `overall` or a skill). */
export interface MembersRow {
  members: number;
  learners: number;
  cefr: string;
}

type CourseRow = typeof courses.$inferSelect;

/**
 * One row of `groupActivityStatement`: `k` is null for `total`, the period's first day for `series`,
 * the course id for `course`; `title` and `slug` only for courses. The sums are null where no row matched.
 */
export interface ActivityRow {
  kind: "total" | "series" | "course";
  k: string | null;
  title: CourseRow["title"] | null;
  slug: CourseRow["slug"] | null;
  learners: number;
  seconds: number | null;
  attempts: number | null;
  lessons: number | null;
  courses: number | null;
  xp: number | null;
}

/**
 * One group's activity in the range, from its members' rows of `institution_activity_days` (each
 * member's days through the table's key, (institution, learner, day, course), by the member's number:
 * `CROSS JOIN` keeps SQLite from walking the institution's whole range instead): the totals, one row
 * per period, the top courses and the group's own row, told apart by `kind`; distinct learners are
 * counted over them. The courses answer by id, ties broken by id as ever.
 */
export function groupActivityStatement(filter: Filter & { group: string }, granularity: Granularity): SQL {
  const sums = sql.raw(
    "count(DISTINCT r.user_number) AS learners, sum(r.seconds) AS seconds, sum(r.attempts) AS attempts, sum(r.lessons_completed) AS lessons, sum(r.courses_completed) AS courses, sum(r.xp) AS xp",
  );
  const period = sql.raw(periodStartSql(granularity, "r.day"));
  return sql`
    WITH r AS MATERIALIZED (
      SELECT r.user_number, r.day, r.course_number, r.attempts, r.seconds, r.xp, r.lessons_completed, r.courses_completed
      FROM member_groups mg CROSS JOIN users u ON u.id = mg.user_id
        CROSS JOIN institution_activity_days r NOT INDEXED
        ON r.institution_number = ${institutionNumberOf(filter.institutionId)} AND r.user_number = u.number
          AND r.day >= ${filter.from} AND r.day <= ${filter.to}
      WHERE mg.institution_id = ${filter.institutionId} AND mg.group_name = ${filter.group})
    SELECT 'total' AS kind, NULL AS k, NULL AS title, NULL AS slug, ${sums} FROM r
    UNION ALL
    SELECT 'series', p.k, NULL, NULL, p.learners, p.seconds, p.attempts, p.lessons, p.courses, p.xp FROM (
      SELECT ${period} AS k, ${sums} FROM r GROUP BY 1) p
    UNION ALL
    SELECT 'course', t.k, t.title, t.slug, t.learners, t.seconds, t.attempts, t.lessons, t.courses, t.xp FROM (
      SELECT c.id AS k, c.title, c.slug, ${sums} FROM r JOIN courses c ON c.number = r.course_number
      GROUP BY r.course_number ORDER BY learners DESC, courses DESC, c.id LIMIT ${TOP_COURSES}) t`;
}
