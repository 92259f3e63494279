import type { z } from "@hono/zod-openapi";
import { CEFR_LEVELS, type CefrLevel, type Skill } from "../../../../db/schema";
import { addDays, cefrReport, type SkillEvidenceRow, weekOf } from "../../rules";
import { accuracy, minutes, round3 } from "../present";
import {
  INSIGHT_MIN_ATTEMPTS,
  type LearningInsightsSchema,
  type RecommendationSchema,
  type SkillAccuracySchema,
  TREND_THRESHOLD,
  TREND_WEEKS,
  WEEKDAYS,
} from "./schemas";
import type { InsightsData } from "./service";

/** Evidence, activity and the catalogue → the learning insights. Pure: no I/O. */

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
  const weekIndex = new Map(weeks.map((w) => [w.week, w]));
  for (const day of data.days) {
    const week = weekIndex.get(weekOf(day.day));
    if (!week) continue;
    week.attempts += day.attempts;
    week.correct += day.correct;
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
      weakest: ranked.length >= 2 ? (ranked.at(-1) ?? null) : null,
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
      by_weekday: WEEKDAYS.map((weekday, i) => ({ weekday, minutes: minutes(byWeekday[i] ?? 0) })),
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
