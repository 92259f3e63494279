import type { z } from "@hono/zod-openapi";
import { CEFR_LEVELS, type CefrLevel, type Skill } from "../../../db/schema";
import { ACHIEVEMENTS, addDays, cefrReport, currentStreak, type SkillEvidenceRow, weekOf } from "../rules";
import {
  ANONYMOUS_NAME,
  CEFR_METHOD,
  type CefrReportSchema,
  type GamificationStatsSchema,
  type HistoryPointSchema,
  INSIGHT_MIN_ATTEMPTS,
  type LeaderboardEntrySchema,
  type LearningInsightsSchema,
  type LessonProgressSchema,
  type PlatformStatsSchema,
  type ProgressHistorySchema,
  type RecommendationSchema,
  type SkillAccuracySchema,
  TREND_THRESHOLD,
  TREND_WEEKS,
  WEEKDAYS,
} from "./schemas";
import type {
  DailyActivityRow,
  InsightsData,
  LeaderboardRow,
  LessonProgressRow,
  readGamification,
  readPlatformStats,
} from "./service";

/** Rows of the aggregates → wire shapes. Pure: no I/O, so every number here is unit-testable. */

export function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export function minutes(seconds: number): number {
  return Math.round(seconds / 6) / 10;
}

function accuracy(correct: number, attempts: number): number | null {
  return attempts > 0 ? round3(correct / attempts) : null;
}

// ---------------------------------------------------------------------------------------------

export function presentLessonProgress(row: LessonProgressRow): z.infer<typeof LessonProgressSchema> {
  const progress = row.progress;
  const itemsTotal = progress?.itemsTotal ?? row.itemCount;
  const itemsDone = progress?.itemsDone ?? 0;
  return {
    lesson_id: row.id,
    position: row.position,
    title: row.title,
    items_done: itemsDone,
    items_total: itemsTotal,
    percent: itemsTotal > 0 ? Math.round((itemsDone / itemsTotal) * 100) : 0,
    status: progress?.status ?? "not_started",
    started_at: progress?.startedAt ?? null,
    completed_at: progress?.completedAt ?? null,
    score: progress && progress.itemsDone > 0 ? round3(progress.scoreSum / progress.itemsDone) : null,
  };
}

// ---------------------------------------------------------------------------------------------

interface Totals {
  attempts: number;
  itemsCompleted: number;
  correct: number;
  xp: number;
  seconds: number;
}

const zero = (): Totals => ({ attempts: 0, itemsCompleted: 0, correct: 0, xp: 0, seconds: 0 });

function add(into: Totals, row: Totals): void {
  into.attempts += row.attempts;
  into.itemsCompleted += row.itemsCompleted;
  into.correct += row.correct;
  into.xp += row.xp;
  into.seconds += row.seconds;
}

function historyFields(t: Totals) {
  return {
    attempts: t.attempts,
    items_completed: t.itemsCompleted,
    correct: t.correct,
    accuracy: accuracy(t.correct, t.attempts),
    xp: t.xp,
    minutes: minutes(t.seconds),
  };
}

/** A dense series over [from, to]: every day (or every week touching the range), zero-filled. */
export function presentHistory(input: {
  userId: string;
  timeZone: string;
  from: string;
  to: string;
  granularity: "day" | "week";
  rows: DailyActivityRow[];
}): z.infer<typeof ProgressHistorySchema> {
  const byDay = new Map(input.rows.map((r) => [r.day, r]));
  const buckets = new Map<string, Totals>();
  const totals = zero();
  let activeDays = 0;
  for (let day = input.from; day <= input.to; day = addDays(day, 1)) {
    const key = input.granularity === "week" ? weekOf(day) : day;
    let bucket = buckets.get(key);
    if (!bucket) buckets.set(key, (bucket = zero()));
    const row = byDay.get(day);
    if (!row) continue;
    add(bucket, row);
    add(totals, row);
    if (row.attempts > 0) activeDays += 1;
  }
  const series: z.infer<typeof HistoryPointSchema>[] = [...buckets].map(([date, t]) => ({
    date,
    ...historyFields(t),
  }));
  return {
    user_id: input.userId,
    time_zone: input.timeZone,
    from: input.from,
    to: input.to,
    granularity: input.granularity,
    series,
    totals: { ...historyFields(totals), active_days: activeDays },
  };
}

// ---------------------------------------------------------------------------------------------

export function presentCefrReport(
  userId: string,
  rows: SkillEvidenceRow[],
): z.infer<typeof CefrReportSchema> {
  const report = cefrReport(rows);
  return {
    user_id: userId,
    overall_level: report.overall,
    skills: report.skills.map((s) => ({
      skill: s.skill,
      level: s.level,
      next_level: s.next,
      progress_to_next: s.progressToNext,
      evidence: s.evidence,
    })),
    method: CEFR_METHOD,
  };
}

// ---------------------------------------------------------------------------------------------

type SkillAccuracy = z.infer<typeof SkillAccuracySchema>;

/** Skills with enough attempts, ranked by mean score (ties: more attempts, then name). */
export function rankSkills(rows: SkillEvidenceRow[]): SkillAccuracy[] {
  const bySkill = new Map<Skill, { attempts: number; scoreSum: number }>();
  for (const row of rows) {
    const entry = bySkill.get(row.skill) ?? { attempts: 0, scoreSum: 0 };
    entry.attempts += row.attempts;
    entry.scoreSum += row.scoreSum;
    bySkill.set(row.skill, entry);
  }
  return [...bySkill]
    .filter(([, e]) => e.attempts >= INSIGHT_MIN_ATTEMPTS)
    .map(([skill, e]) => ({ skill, attempts: e.attempts, exact: e.scoreSum / e.attempts }))
    .sort((a, b) => b.exact - a.exact || b.attempts - a.attempts || a.skill.localeCompare(b.skill))
    .map(({ skill, attempts, exact }) => ({ skill, attempts, accuracy: round3(exact) }));
}

/** Least-squares slope of y over x; null with fewer than two points. */
export function slope(points: { x: number; y: number }[]): number | null {
  if (points.length < 2) return null;
  const mx = points.reduce((s, p) => s + p.x, 0) / points.length;
  const my = points.reduce((s, p) => s + p.y, 0) / points.length;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  return sxx === 0 ? null : sxy / sxx;
}

export function trendLabel(value: number | null): "improving" | "steady" | "declining" {
  if (value === null) return "steady";
  if (value >= TREND_THRESHOLD) return "improving";
  if (value <= -TREND_THRESHOLD) return "declining";
  return "steady";
}

/** The first week of the trend window: Monday, TREND_WEEKS − 1 weeks before the current week. */
export function trendStart(today: string): string {
  return addDays(weekOf(today), -7 * (TREND_WEEKS - 1));
}

export function presentInsights(
  userId: string,
  today: string,
  data: InsightsData,
): z.infer<typeof LearningInsightsSchema> {
  const ranked = rankSkills(data.evidence);

  const start = trendStart(today);
  const weeks = Array.from({ length: TREND_WEEKS }, (_, i) => ({
    week: addDays(start, 7 * i),
    attempts: 0,
    correct: 0,
  }));
  const weekIndex = new Map(weeks.map((w, i) => [w.week, i]));
  for (const day of data.days) {
    const i = weekIndex.get(weekOf(day.day));
    if (i === undefined) continue;
    weeks[i]!.attempts += day.attempts;
    weeks[i]!.correct += day.correct;
  }
  const fitted = slope(
    weeks.flatMap((w, i) => (w.attempts > 0 ? [{ x: i, y: w.correct / w.attempts }] : [])),
  );
  const rounded = fitted === null ? null : Math.round(fitted * 10_000) / 10_000;

  const byWeekday = new Array<number>(7).fill(0);
  const byHour = new Array<number>(24).fill(0);
  for (const cell of data.grid) {
    byWeekday[cell.weekday] = (byWeekday[cell.weekday] ?? 0) + cell.seconds;
    byHour[cell.hour] = (byHour[cell.hour] ?? 0) + cell.seconds;
  }
  const totalSeconds = data.grid.reduce((s, c) => s + c.seconds, 0);

  return {
    user_id: userId,
    skills: {
      min_attempts: INSIGHT_MIN_ATTEMPTS,
      ranked,
      strongest: ranked[0] ?? null,
      weakest: ranked.length >= 2 ? ranked.at(-1)! : null,
    },
    accuracy_trend: {
      weeks: weeks.map((w) => ({
        week: w.week,
        attempts: w.attempts,
        correct: w.correct,
        accuracy: accuracy(w.correct, w.attempts),
      })),
      slope: rounded,
      label: trendLabel(rounded),
    },
    study_time: {
      total_minutes: minutes(totalSeconds),
      by_weekday: WEEKDAYS.map((weekday, i) => ({ weekday, minutes: minutes(byWeekday[i]!) })),
      by_hour: byHour.map((seconds, hour) => ({ hour, minutes: minutes(seconds) })),
    },
    recommendations: recommendations(data, cefrReport(data.evidence).overall),
  };
}

function recommendations(
  data: InsightsData,
  level: CefrLevel | null,
): z.infer<typeof RecommendationSchema>[] {
  if (data.continuing.length > 0) {
    return data.continuing.map((r) => ({
      course_id: r.courseId,
      course_title: r.courseTitle,
      lesson_id: r.lessonId,
      lesson_title: r.lessonTitle,
      position: r.position,
      reason_code: "continue_course" as const,
      reason: r.previousTitle
        ? `continue ${r.courseTitle}: next lesson after ${r.previousTitle}`
        : `continue ${r.courseTitle}: first lesson`,
    }));
  }
  // Before any level is assessed, courses covering A1.
  const target = level ?? CEFR_LEVELS[0];
  return data.starting
    .filter((r) => r.level === target)
    .map((r) => ({
      course_id: r.courseId,
      course_title: r.courseTitle,
      lesson_id: r.lessonId,
      lesson_title: r.lessonTitle,
      position: r.position,
      reason_code: level ? ("matches_level" as const) : ("first_steps" as const),
      reason: level ? `matches your level ${level}` : "a course for beginners: no CEFR level assessed yet",
    }));
}

// ---------------------------------------------------------------------------------------------

export function presentGamification(
  userId: string,
  today: string,
  week: string,
  data: Awaited<ReturnType<typeof readGamification>>,
): z.infer<typeof GamificationStatsSchema> {
  const stats = data.stats;
  const definitions = new Map<string, (typeof ACHIEVEMENTS)[number]>(ACHIEVEMENTS.map((a) => [a.code, a]));
  const unlocked = data.unlocked.flatMap((u) => {
    const a = definitions.get(u.code);
    return a ? [{ code: a.code, name: a.name, description: a.description, unlocked_at: u.unlockedAt }] : [];
  });
  const have = new Set(unlocked.map((u) => u.code));
  const locked = ACHIEVEMENTS.filter((a) => !have.has(a.code)).map((a) => ({
    code: a.code,
    name: a.name,
    description: a.description,
    progress: { current: Math.min(stats?.[a.metric] ?? 0, a.target), target: a.target },
  }));
  return {
    user_id: userId,
    xp_total: stats?.xpTotal ?? 0,
    xp_this_week: data.weekXp,
    week,
    current_streak: currentStreak(stats?.currentStreak ?? 0, stats?.lastActiveDay ?? null, today),
    longest_streak: stats?.longestStreak ?? 0,
    last_active_day: stats?.lastActiveDay ?? null,
    achievements: { unlocked, locked },
  };
}

// ---------------------------------------------------------------------------------------------

export interface Viewer {
  /** The learner the request is about: never anonymised to the caller. */
  subjectId: string;
  /** The caller's institution; learners of other institutions are anonymised on the platform scope. */
  institutionId: string | null;
  /** Platform staff see every institution's names (opted-out learners stay anonymous). */
  staff: boolean;
}

function entry(
  row: LeaderboardRow,
  rank: number,
  scope: "institution" | "platform",
  viewer: Viewer,
): z.infer<typeof LeaderboardEntrySchema> {
  const isMe = row.userId === viewer.subjectId;
  const foreign = scope === "platform" && !viewer.staff && row.institutionId !== viewer.institutionId;
  const anonymous = !isMe && (row.optOut || foreign);
  return {
    rank,
    user_id: anonymous ? null : row.userId,
    display_name: anonymous ? ANONYMOUS_NAME : row.name,
    xp: row.xp,
    is_me: isMe,
  };
}

/** Ranks are 1 + the number with more XP: in a list sorted by XP that is the index of the first equal. */
export function presentLeaderboard(input: {
  period: "week" | "all_time";
  scope: "institution" | "platform";
  week: string;
  viewer: Viewer;
  top: LeaderboardRow[];
  me: LeaderboardRow;
  above: number;
}) {
  let firstOfXp = 0;
  const entries = input.top.map((row, i) => {
    if (i === 0 || row.xp !== input.top[i - 1]!.xp) firstOfXp = i;
    return entry(row, firstOfXp + 1, input.scope, input.viewer);
  });
  return {
    period: input.period,
    scope: input.scope,
    week: input.period === "week" ? input.week : null,
    entries,
    me: entry(input.me, input.above + 1, input.scope, input.viewer),
  };
}

// ---------------------------------------------------------------------------------------------

export function presentPlatformStats(
  today: string,
  now: string,
  data: Awaited<ReturnType<typeof readPlatformStats>>,
): z.infer<typeof PlatformStatsSchema> {
  const counter = (name: string) => data.counters.get(name) ?? 0;
  return {
    content: {
      courses: data.content.courses,
      lessons: data.content.lessons,
      training_items: data.content.items,
    },
    active_learners: {
      as_of: today,
      today: data.active.today,
      last_7_days: data.active.last7,
      last_30_days: data.active.last30,
    },
    activity: {
      attempts: counter("attempts"),
      items_completed: counter("items_completed"),
      lessons_completed: counter("lessons_completed"),
      courses_completed: counter("courses_completed"),
    },
    generated_at: now,
  };
}
