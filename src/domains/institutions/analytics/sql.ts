import { type SQL, sql } from "drizzle-orm";
import type { courses } from "../../../db/schema";
import { type Granularity, periodStartSql } from "./range";

/**
 * The analytics' raw SQL: the two statements of the dashboard after the institution's row, each
 * built for its filter (and granularity) as a drizzle `sql` query, run in one D1 batch. Both read
 * only tables other domains keep (users, member_groups, learner_stats, the recording's
 * institution_activity_days rollup, courses); SQLite computes every column, so the row types are
 * written out next to each statement.
 */

export const TOP_COURSES = 10;

export interface Filter {
  institutionId: string;
  from: string;
  to: string;
  group: string | null;
}

/** Members of the institution, or only those of the filter's group. */
function memberCondition(userColumn: SQL, filter: Filter): SQL {
  if (filter.group === null) return sql`1`;
  return sql`${userColumn} IN (SELECT user_id FROM member_groups WHERE institution_id = ${filter.institutionId} AND group_name = ${filter.group})`;
}

/**
 * Statement 1 of 2 after the institution's row: the members now — their count, the learners' CEFR
 * levels from learner_stats (one row per learner, kept by every recording), and members per group —
 * as one row of JSON columns.
 */
export function membersStatement(filter: Filter): SQL {
  const inGroup = memberCondition(sql`u.id`, filter);
  const groups = filter.group === null ? sql`1` : sql`group_name = ${filter.group}`;
  return sql`
    SELECT
      (SELECT count(*) FROM users u WHERE u.institution_id = ${filter.institutionId} AND ${inGroup}) AS members,
      (SELECT count(*) FROM users u WHERE u.institution_id = ${filter.institutionId} AND u.role = 'learner' AND ${inGroup}) AS learners,
      (SELECT json_group_array(json_array(k, v, n)) FROM (
        SELECT je.key AS k, je.value AS v, count(*) AS n
        FROM users u JOIN learner_stats ls ON ls.user_id = u.id, json_each(ls.cefr_levels) je
        WHERE u.institution_id = ${filter.institutionId} AND u.role = 'learner' AND ${inGroup}
        GROUP BY je.key, je.value)) AS cefr,
      (SELECT json_group_array(json_array(group_name, n)) FROM (
        SELECT group_name, count(*) AS n FROM member_groups
        WHERE institution_id = ${filter.institutionId} AND ${groups}
        GROUP BY group_name)) AS groups`;
}

/** `cefr`: JSON `[[key, level, learners], …]` (key `overall` or a skill); `groups`: JSON `[[group, members], …]`. */
export interface MembersRow {
  members: number;
  learners: number;
  cefr: string;
  groups: string;
}

type CourseRow = typeof courses.$inferSelect;

/**
 * One row of the activity statement: `k` is null for `total`, the period's first day for `series`,
 * the course id for `course`, the group's name for `group`; `title` and `slug` only for `course`.
 * The sums are null where no rollup row matched.
 */
export interface ActivityRow {
  kind: "total" | "series" | "course" | "group";
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
 * Statement 2 of 2: everything about activity in the range, from the institution's daily rollup
 * only (never `attempts`): the totals, one row per period, the top courses and one row per group,
 * told apart by `kind`. Distinct learners are counted over the rollup's (day, learner, course) rows.
 * Each part reads its own index range (a shared CTE would be materialised first, which measured
 * twice as slow); the groups walk `member_groups` and seek each member's days.
 */
export function activityStatement(filter: Filter, granularity: Granularity): SQL {
  const sums = sql.raw(
    "count(DISTINCT r.user_id) AS learners, sum(r.seconds) AS seconds, sum(r.attempts) AS attempts, sum(r.lessons_completed) AS lessons, sum(r.courses_completed) AS courses, sum(r.xp) AS xp",
  );
  const period = sql.raw(periodStartSql(granularity, "r.day"));
  const inRange = sql`r.institution_id = ${filter.institutionId} AND r.day >= ${filter.from} AND r.day <= ${filter.to} AND ${memberCondition(sql`r.user_id`, filter)}`;
  return sql`
    SELECT 'total' AS kind, NULL AS k, NULL AS title, NULL AS slug, ${sums}
      FROM institution_activity_days r WHERE ${inRange}
    UNION ALL
    SELECT 'series', p.k, NULL, NULL, p.learners, p.seconds, p.attempts, p.lessons, p.courses, p.xp FROM (
      SELECT ${period} AS k, ${sums} FROM institution_activity_days r WHERE ${inRange} GROUP BY 1) p
    UNION ALL
    SELECT 'course', t.k, c.title, c.slug, t.learners, t.seconds, t.attempts, t.lessons, t.courses, t.xp FROM (
      SELECT r.course_id AS k, ${sums} FROM institution_activity_days r WHERE ${inRange} GROUP BY r.course_id
      ORDER BY learners DESC, courses DESC, r.course_id LIMIT ${TOP_COURSES}) t
      JOIN courses c ON c.id = t.k
    UNION ALL
    SELECT 'group', g.k, NULL, NULL, g.learners, g.seconds, g.attempts, g.lessons, g.courses, g.xp FROM (
      SELECT mg.group_name AS k, ${sums} FROM member_groups mg
      JOIN institution_activity_days r ON r.institution_id = mg.institution_id AND r.user_id = mg.user_id
      WHERE mg.institution_id = ${filter.institutionId} AND r.day >= ${filter.from} AND r.day <= ${filter.to}
        AND ${filter.group === null ? sql`1` : sql`mg.group_name = ${filter.group}`}
      GROUP BY mg.group_name) g`;
}
