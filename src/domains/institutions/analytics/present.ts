import { CEFR_LEVELS, SKILLS } from "../../../db/schema";
import { type ActivityRow, TOP_COURSES } from "./sql";

/**
 * Analytics' figures as the answer shows them: seconds as minutes to a tenth, a row's sums as the
 * `totals` and `series` fields, learners per CEFR level (those without one as `none`), and the top
 * courses in their order. Pure functions of rows already read; figures.ts reads them.
 */

type Levels = Record<(typeof CEFR_LEVELS)[number] | "none", number>;

function minutes(seconds: number | null): number {
  return Math.round((seconds ?? 0) / 6) / 10;
}

/** A row's learners and sums, wherever it comes from. */
type Figures = Pick<ActivityRow, "learners" | "attempts" | "seconds" | "xp" | "lessons" | "courses">;

export function activityTotals(row: Figures | undefined) {
  return {
    active_learners: row?.learners ?? 0,
    minutes: minutes(row?.seconds ?? 0),
    attempts: row?.attempts ?? 0,
    lessons_completed: row?.lessons ?? 0,
  };
}

export function fullTotals(row: Figures | undefined) {
  return { ...activityTotals(row), courses_completed: row?.courses ?? 0, xp: row?.xp ?? 0 };
}

/** Learners per level for `overall` and each skill; those without a level count as `none`. */
export function cefrDistribution(cefrJson: string, learners: number) {
  const empty = (): Levels => ({ ...Object.fromEntries(CEFR_LEVELS.map((l) => [l, 0])), none: 0 }) as Levels;
  const keys = ["overall", ...SKILLS] as const;
  const byKey = new Map<string, Levels>(keys.map((k) => [k, empty()]));
  for (const [key, level, count] of JSON.parse(cefrJson) as [string, string, number][]) {
    const levels = byKey.get(key);
    if (levels && (CEFR_LEVELS as readonly string[]).includes(level)) levels[level as keyof Levels] += count;
  }
  for (const levels of byKey.values()) {
    const known = CEFR_LEVELS.reduce((sum, l) => sum + levels[l], 0);
    levels.none = Math.max(0, learners - known);
  }
  const [overall, ...skills] = keys.map((k) => byKey.get(k) as Levels);
  return {
    overall: overall as Levels,
    skills: Object.fromEntries(SKILLS.map((s, i) => [s, skills[i] as Levels])) as Record<
      (typeof SKILLS)[number],
      Levels
    >,
  };
}

export function topCourses(rows: ActivityRow[]) {
  return rows
    .sort(
      (a, b) =>
        b.learners - a.learners ||
        (b.courses ?? 0) - (a.courses ?? 0) ||
        (String(a.k) < String(b.k) ? -1 : String(a.k) > String(b.k) ? 1 : 0),
    )
    .slice(0, TOP_COURSES)
    .map((row) => ({
      course_id: row.k ?? "",
      title: row.title ?? "",
      slug: row.slug ?? "",
      active_learners: row.learners,
      completions: row.courses ?? 0,
      lessons_completed: row.lessons ?? 0,
      minutes: minutes(row.seconds),
    }));
}
