import type { z } from "@hono/zod-openapi";
import { DAY_MS, dayMs, formatDay, loopCap } from "../../../platform/dates";
import { cefrReport, type SkillEvidenceRow, weekOf } from "../rules";
import {
  CEFR_METHOD,
  type CefrReportSchema,
  type HistoryPointSchema,
  type LessonProgressSchema,
  MAX_HISTORY_DAYS,
  type PlatformStatsSchema,
  type ProgressHistorySchema,
} from "./schemas";
import type { DailyActivityRow, LessonProgressRow, readPlatformStats } from "./service";

/** Rows of the aggregates → wire shapes. Pure: no I/O, so every number here is unit-testable. */

export function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export function minutes(seconds: number): number {
  return Math.round(seconds / 6) / 10;
}

export function accuracy(correct: number, attempts: number): number | null {
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
  // Days as numbers, at most MAX_HISTORY_DAYS of them (the route validated the range; a range that
  // escaped it fails as an internal error instead of looping).
  const tick = loopCap(MAX_HISTORY_DAYS, "progress history days");
  const end = dayMs(input.to);
  for (let ms = dayMs(input.from); ms <= end; ms += DAY_MS) {
    tick();
    const day = formatDay(ms);
    const key = input.granularity === "week" ? weekOf(day) : day;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = zero();
      buckets.set(key, bucket);
    }
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
