import { requiredNumber } from "../../../db/numbers";
import { nowIso } from "../../../platform/ids";
import { ACHIEVEMENTS, localTime, passes, reachedAchievements, streaks, weekOf, xpFor } from "../rules";
import type { OrderedAttempt } from "./dedupe";
import type { ItemRow, LessonProgressRow } from "./load";
import type { Tally } from "./tally";
import type { AttemptInput, AttemptOutcome } from "./types";

/** What passing (or not) one attempt did to its item. */
interface ItemStep {
  xp: number;
  newlyCompleted: boolean;
  wasCompleted: boolean;
  previousBest: number;
  best: number;
}

/** Applies one attempt: its item, lesson and course, XP, activity and achievements. */
export function deriveAttempt(tally: Tally, { attempt, item, at, duplicate }: OrderedAttempt): void {
  if (duplicate) {
    tally.outcomes.set(attempt.id, duplicateOutcome(attempt.id));
    return;
  }
  const occurredAt = nowIso(at);
  const local = localTime(occurredAt, tally.learner.timeZone);
  const step = advanceItem(tally, item, attempt, Math.floor(at / 1000));
  const lesson = advanceLesson(tally, item, step, occurredAt);
  const courseCompleted = advanceCourse(tally, item, step, lesson, occurredAt);
  countActivity(tally, attempt, item, step, local);
  const achievements = unlockAchievements(tally, occurredAt);
  tally.attemptRows.push({
    id: attempt.id,
    userId: tally.learner.id,
    institutionId: tally.learner.institutionId,
    trainingItemId: item.id,
    lessonId: item.lessonId,
    courseId: item.courseId,
    skill: item.skill,
    cefrLevel: item.cefrLevel,
    score: attempt.score,
    correct: attempt.correct,
    durationSeconds: attempt.duration_seconds,
    occurredAt,
    localDay: local.day,
    xpAwarded: step.xp,
    recordedAt: tally.now,
  });
  tally.outcomes.set(attempt.id, {
    id: attempt.id,
    status: "recorded",
    xp_gained: step.xp,
    item_completed: step.newlyCompleted,
    lesson: {
      id: item.lessonId,
      status: lesson.row.status,
      items_done: lesson.row.itemsDone,
      items_total: lesson.row.itemsTotal,
      percent:
        lesson.row.itemsTotal > 0 ? Math.round((lesson.row.itemsDone / lesson.row.itemsTotal) * 100) : 0,
    },
    course_completed: courseCompleted,
    achievements_unlocked: achievements,
  });
}

function duplicateOutcome(id: string): AttemptOutcome {
  return {
    id,
    status: "duplicate",
    xp_gained: 0,
    item_completed: false,
    lesson: null,
    course_completed: false,
    achievements_unlocked: [],
  };
}

/**
 * XP and completion: full XP for the first pass, practice XP after it; the best score is kept. The
 * item's completion time is Unix seconds of `occurred_at` (`item_progress` stores it so).
 */
function advanceItem(tally: Tally, item: ItemRow, attempt: AttemptInput, second: number): ItemStep {
  const previous = tally.items.get(item.id);
  const wasCompleted = Boolean(previous?.completedAt);
  const newlyCompleted = passes(attempt) && !wasCompleted;
  const previousBest = previous?.bestScore ?? 0;
  const best = Math.max(previousBest, attempt.score);
  tally.items.set(item.id, {
    itemNumber: requiredNumber(item.number, `training item ${item.id}`),
    bestScore: best,
    completedAt: previous?.completedAt ?? (newlyCompleted ? second : null),
  });
  return { xp: xpFor(attempt, item.xp, wasCompleted), newlyCompleted, wasCompleted, previousBest, best };
}

/** The lesson's done items and score; it completes when every item is done. */
function advanceLesson(
  tally: Tally,
  item: ItemRow,
  step: ItemStep,
  occurredAt: string,
): { row: LessonProgressRow; completedNow: boolean } {
  const row = tally.lessons.get(item.lessonId) ?? {
    lessonId: item.lessonId,
    courseId: item.courseId,
    itemsDone: 0,
    itemsTotal: tally.lessonItemCount.get(item.lessonId) ?? 0,
    scoreSum: 0,
    status: "in_progress" as const,
    startedAt: occurredAt,
    completedAt: null,
    lastActivityAt: occurredAt,
  };
  if (step.newlyCompleted) {
    row.itemsDone += 1;
    row.scoreSum += step.best;
  } else if (step.wasCompleted && step.best > step.previousBest) {
    row.scoreSum += step.best - step.previousBest;
  }
  row.lastActivityAt = maxIso(row.lastActivityAt, occurredAt);
  let completedNow = false;
  if (row.status !== "completed" && row.itemsTotal > 0 && row.itemsDone >= row.itemsTotal) {
    row.status = "completed";
    row.completedAt = occurredAt;
    completedNow = true;
  }
  tally.lessons.set(item.lessonId, row);
  return { row, completedNow };
}

/** The course's XP and items; a lesson completed now counts, and may complete the course. */
function advanceCourse(
  tally: Tally,
  item: ItemRow,
  step: ItemStep,
  lesson: { row: LessonProgressRow; completedNow: boolean },
  occurredAt: string,
): boolean {
  const course = tally.courses.get(item.courseId) ?? {
    userId: tally.learner.id,
    courseId: item.courseId,
    institutionId: tally.learner.institutionId,
    lessonsCompleted: 0,
    lessonsTotal: tally.courseLessonCount.get(item.courseId) ?? 0,
    itemsDone: 0,
    xp: 0,
    startedAt: occurredAt,
    completedAt: null,
    lastActivityAt: occurredAt,
  };
  tally.courses.set(item.courseId, course);
  course.xp += step.xp;
  course.itemsDone += step.newlyCompleted ? 1 : 0;
  course.lastActivityAt = maxIso(course.lastActivityAt, occurredAt);
  if (!lesson.completedNow) return false;
  course.lessonsCompleted += 1;
  tally.totals.lessonsCompleted += 1;
  const score = lesson.row.itemsDone > 0 ? lesson.row.scoreSum / lesson.row.itemsDone : 0;
  if (score >= 0.9999) tally.totals.perfectLessons += 1;
  tally.happenings.push({
    type: "lesson.completed",
    lessonId: item.lessonId,
    courseId: item.courseId,
    score,
    items: lesson.row.itemsTotal,
    at: occurredAt,
  });
  if (course.completedAt || course.lessonsTotal === 0 || course.lessonsCompleted < course.lessonsTotal)
    return false;
  course.completedAt = occurredAt;
  tally.totals.coursesCompleted += 1;
  tally.happenings.push({ type: "course.completed", courseId: item.courseId, xp: course.xp, at: occurredAt });
  return true;
}

/** The learner's totals and the activity deltas: per day, per hour of the week, per skill and level, per week. */
function countActivity(
  tally: Tally,
  attempt: AttemptInput,
  item: ItemRow,
  step: ItemStep,
  local: { day: string; weekday: number; hour: number },
): void {
  const { totals } = tally;
  const correct = attempt.correct ? 1 : 0;
  totals.xpTotal += step.xp;
  totals.attempts += 1;
  totals.correct += correct;
  totals.seconds += attempt.duration_seconds;
  totals.itemsCompleted += step.newlyCompleted ? 1 : 0;
  tally.xpGained += step.xp;
  bump(
    tally.daily,
    local.day,
    {
      attempts: 1,
      itemsCompleted: step.newlyCompleted ? 1 : 0,
      correct,
      xp: step.xp,
      seconds: attempt.duration_seconds,
    },
    {},
  );
  bump(
    tally.hourly,
    `${local.weekday}:${local.hour}`,
    { seconds: attempt.duration_seconds, attempts: 1 },
    { weekday: local.weekday, hour: local.hour },
  );
  bump(
    tally.evidence,
    `${item.skill}:${item.cefrLevel}`,
    { attempts: 1, correct, scoreSum: attempt.score },
    { skill: item.skill, cefrLevel: item.cefrLevel },
  );
  const week = weekOf(local.day);
  if (step.xp > 0) tally.weekly.set(week, (tally.weekly.get(week) ?? 0) + step.xp);
  tally.activeDays.add(local.day);
}

/** The achievements the totals (and the longest streak so far) have reached and the learner did not have. */
function unlockAchievements(tally: Tally, occurredAt: string): string[] {
  const run = streaks(tally.activeDays);
  tally.totals.longestStreak = Math.max(tally.totals.longestStreak, run.longest);
  const reached = new Set(reachedAchievements(tally.totals));
  const unlocked = ACHIEVEMENTS.filter((a) => reached.has(a.code) && !tally.unlocked.has(a.code));
  for (const { code, name } of unlocked) {
    tally.unlocked.add(code);
    tally.happenings.push({ type: "achievement.unlocked", code, name, at: occurredAt });
  }
  return unlocked.map((a) => a.code);
}

function maxIso(a: string | null | undefined, b: string): string {
  return !a || b > a ? b : a;
}

/** Adds `delta` to the counts under `key`, starting them (with their identifying fields) when new. */
function bump<K extends Record<string, number>, I extends object>(
  map: Map<string, K & I>,
  key: string,
  delta: K,
  identity: I,
): void {
  const current = map.get(key);
  if (!current) {
    map.set(key, { ...identity, ...delta });
    return;
  }
  for (const k of Object.keys(delta) as (keyof K)[]) (current[k] as number) += delta[k] as number;
}
