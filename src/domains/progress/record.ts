import { and, eq, inArray, sql } from "drizzle-orm";
import {
  achievements,
  attempts,
  type CefrLevel,
  courseProgress,
  courses,
  dailyActivity,
  itemProgress,
  type LessonStatus,
  learnerStats,
  lessonProgress,
  lessons,
  type Skill,
  skillEvidence,
  trainingItems,
} from "../../db/schema";
import type { Statement } from "../../platform/batch";
import type { Database } from "../../platform/db";
import { domainEvent, type OutboxRow } from "../../platform/events";
import { nowIso } from "../../platform/ids";
import { activityRollupStatements } from "../institutions/analytics/rollup";
import { writeStatements } from "./persist";
import {
  ACHIEVEMENTS,
  addDays,
  cefrReport,
  currentStreak,
  localTime,
  passes,
  reachedAchievements,
  type SkillEvidenceRow,
  STREAK_MILESTONES,
  streaks,
  weekOf,
  xpFor,
} from "./rules";

export interface AttemptInput {
  id: string;
  training_item_id: string;
  score: number;
  correct: boolean;
  duration_seconds: number;
  occurred_at: string;
}

export interface Learner {
  id: string;
  institutionId: string | null;
  timeZone: string;
}

export interface AttemptOutcome {
  id: string;
  status: "recorded" | "duplicate";
  xp_gained: number;
  item_completed: boolean;
  lesson: {
    id: string;
    status: LessonStatus;
    items_done: number;
    items_total: number;
    percent: number;
  } | null;
  course_completed: boolean;
  achievements_unlocked: string[];
}

export type RecordResult =
  | { ok: true; outcomes: AttemptOutcome[]; summary: RecordSummary }
  | {
      ok: false;
      code: "validation_failed" | "conflict";
      detail: string;
      errors?: { path: string; message: string }[];
    };

export interface RecordSummary {
  recorded: number;
  duplicates: number;
  xp_gained: number;
  xp_total: number;
  lessons_completed: string[];
  courses_completed: string[];
  achievements_unlocked: string[];
  current_streak: number;
  events: { id: string; type: string }[];
}

type ItemRow = {
  id: string;
  lessonId: string;
  courseId: string;
  xp: number;
  skill: Skill;
  cefrLevel: CefrLevel;
  published: boolean;
};

/** The learner's latest active days read for the streaks (a little over the longest milestone). */
const ACTIVE_DAYS_READ = 400;

/**
 * Records a batch of attempts for one learner and maintains every aggregate and the outbox in one
 * D1 batch. The caller serialises calls per learner (ProgressRecorder), so the state read here is the
 * state the batch writes over; the plain INSERT of the attempts makes a concurrent resend of the
 * same ids (from a second recorder instance during a failover) abort the whole batch instead of
 * counting twice.
 */
export async function recordAttempts(
  db: Database,
  learner: Learner,
  input: AttemptInput[],
  nowMs = Date.now(),
): Promise<RecordResult> {
  const ids = JSON.stringify(input.map((a) => a.id));
  const itemIds = JSON.stringify([...new Set(input.map((a) => a.training_item_id))]);
  const itemsInBatch = sql`(SELECT value FROM json_each(${itemIds}))`;

  const [
    items,
    existing,
    stats,
    unlocked,
    days,
    itemStates,
    lessonStates,
    lessonTotals,
    courseStates,
    courseTotals,
    evidence,
  ] = await db.batch([
    db
      .select({
        id: trainingItems.id,
        lessonId: trainingItems.lessonId,
        courseId: trainingItems.courseId,
        xp: trainingItems.xp,
        skill: trainingItems.skill,
        cefrLevel: trainingItems.cefrLevel,
        published: courses.published,
      })
      .from(trainingItems)
      .innerJoin(courses, eq(courses.id, trainingItems.courseId))
      .where(inArray(trainingItems.id, itemsInBatch)),
    db
      .select({ id: attempts.id, userId: attempts.userId })
      .from(attempts)
      .where(inArray(attempts.id, sql`(SELECT value FROM json_each(${ids}))`)),
    db.select().from(learnerStats).where(eq(learnerStats.userId, learner.id)),
    db.select({ code: achievements.code }).from(achievements).where(eq(achievements.userId, learner.id)),
    db
      .select({ day: dailyActivity.day })
      .from(dailyActivity)
      .where(eq(dailyActivity.userId, learner.id))
      .orderBy(sql`${dailyActivity.day} DESC`)
      .limit(ACTIVE_DAYS_READ),
    db
      .select()
      .from(itemProgress)
      .where(and(eq(itemProgress.userId, learner.id), inArray(itemProgress.trainingItemId, itemsInBatch))),
    db
      .select()
      .from(lessonProgress)
      .where(
        and(
          eq(lessonProgress.userId, learner.id),
          inArray(
            lessonProgress.lessonId,
            sql`(SELECT lesson_id FROM training_items WHERE id IN ${itemsInBatch})`,
          ),
        ),
      ),
    db
      .select({ id: lessons.id, itemCount: lessons.itemCount })
      .from(lessons)
      .where(inArray(lessons.id, sql`(SELECT lesson_id FROM training_items WHERE id IN ${itemsInBatch})`)),
    db
      .select()
      .from(courseProgress)
      .where(
        and(
          eq(courseProgress.userId, learner.id),
          inArray(
            courseProgress.courseId,
            sql`(SELECT course_id FROM training_items WHERE id IN ${itemsInBatch})`,
          ),
        ),
      ),
    db
      .select({ id: courses.id, lessonCount: courses.lessonCount })
      .from(courses)
      .where(inArray(courses.id, sql`(SELECT course_id FROM training_items WHERE id IN ${itemsInBatch})`)),
    // All of the learner's evidence (at most 6 skills × 6 levels): the CEFR levels are recomputed
    // for every skill, not only those of this batch.
    db.select().from(skillEvidence).where(eq(skillEvidence.userId, learner.id)),
  ]);

  // --- validation against the data -----------------------------------------------------------
  const itemById = new Map<string, ItemRow>(items.map((i) => [i.id, i]));
  const errors: { path: string; message: string }[] = [];
  input.forEach((a, index) => {
    const item = itemById.get(a.training_item_id);
    if (!item || !item.published)
      errors.push({
        path: `attempts.${index}.training_item_id`,
        message: "is not a training item of a published course",
      });
  });
  if (errors.length > 0)
    return {
      ok: false,
      code: "validation_failed",
      detail: errors.map((e) => `${e.path}: ${e.message}`).join("; "),
      errors,
    };
  const foreign = existing.filter((e) => e.userId !== learner.id);
  if (foreign.length > 0) {
    return {
      ok: false,
      code: "conflict",
      detail: `Attempt id ${foreign.map((f) => f.id).join(", ")} was already recorded for another learner; use a new UUID.`,
    };
  }

  // --- the learner's state before this batch ----------------------------------------------------
  const now = nowIso(nowMs);
  const today = localTime(nowMs, learner.timeZone).day;
  const duplicates = new Set(existing.map((e) => e.id));
  const itemState = new Map(itemStates.map((s) => [s.trainingItemId, { ...s }]));
  const lessonState = new Map(lessonStates.map((s) => [s.lessonId, { ...s }]));
  const lessonItemCount = new Map(lessonTotals.map((l) => [l.id, l.itemCount]));
  const courseState = new Map(courseStates.map((s) => [s.courseId, { ...s }]));
  const courseLessonCount = new Map(courseTotals.map((c) => [c.id, c.lessonCount]));
  const evidenceRows: SkillEvidenceRow[] = evidence.map((e) => ({ ...e }));
  const already = new Set(unlocked.map((u) => u.code));
  const before = stats[0];
  const learnerTotals = {
    xpTotal: before?.xpTotal ?? 0,
    attempts: before?.attempts ?? 0,
    correct: before?.correct ?? 0,
    seconds: before?.seconds ?? 0,
    itemsCompleted: before?.itemsCompleted ?? 0,
    lessonsCompleted: before?.lessonsCompleted ?? 0,
    coursesCompleted: before?.coursesCompleted ?? 0,
    perfectLessons: before?.perfectLessons ?? 0,
    longestStreak: before?.longestStreak ?? 0,
  };
  const activeDays = new Set(days.map((d) => d.day));

  const daily = new Map<
    string,
    { attempts: number; itemsCompleted: number; correct: number; xp: number; seconds: number }
  >();
  const hourly = new Map<string, { weekday: number; hour: number; seconds: number; attempts: number }>();
  const evidenceDelta = new Map<
    string,
    { skill: Skill; cefrLevel: CefrLevel; attempts: number; correct: number; scoreSum: number }
  >();
  const weekly = new Map<string, number>();
  const attemptRows: (typeof attempts.$inferInsert)[] = [];
  const events: OutboxRow[] = [];
  const scope = { institutionId: learner.institutionId, userId: learner.id };
  const outcomes = new Map<string, AttemptOutcome>();
  const summary = { lessons: [] as string[], courses: [] as string[], achievements: [] as string[], xp: 0 };

  // In the order of the times sent, so that "first pass" and completion times follow what the
  // learner did. Then a time up to the allowed clock skew ahead of ours counts as now: otherwise,
  // just before the learner's midnight, it would fall on their tomorrow and their streak read 0.
  const ordered = input
    .map((attempt, index) => ({ attempt, index, sent: Date.parse(attempt.occurred_at) }))
    .sort((a, b) => a.sent - b.sent || a.index - b.index)
    .map(({ attempt, sent }) => ({ attempt, at: Math.min(sent, nowMs) }));
  const seenInBatch = new Set<string>();

  for (const { attempt, at } of ordered) {
    if (duplicates.has(attempt.id) || seenInBatch.has(attempt.id)) {
      outcomes.set(attempt.id, {
        id: attempt.id,
        status: "duplicate",
        xp_gained: 0,
        item_completed: false,
        lesson: null,
        course_completed: false,
        achievements_unlocked: [],
      });
      continue;
    }
    seenInBatch.add(attempt.id);
    const item = itemById.get(attempt.training_item_id)!;
    const occurredAt = nowIso(at);
    const local = localTime(occurredAt, learner.timeZone);
    const passed = passes(attempt);

    const previousItem = itemState.get(item.id);
    const wasCompleted = Boolean(previousItem?.completedAt);
    const xp = xpFor(attempt, item.xp, wasCompleted);
    const newlyCompleted = passed && !wasCompleted;
    const previousBest = previousItem?.bestScore ?? 0;
    const best = Math.max(previousBest, attempt.score);
    itemState.set(item.id, {
      userId: learner.id,
      trainingItemId: item.id,
      lessonId: item.lessonId,
      bestScore: best,
      attempts: (previousItem?.attempts ?? 0) + 1,
      completedAt: previousItem?.completedAt ?? (newlyCompleted ? occurredAt : null),
      lastAttemptAt: maxIso(previousItem?.lastAttemptAt, occurredAt),
    });

    const lesson = lessonState.get(item.lessonId) ?? {
      userId: learner.id,
      lessonId: item.lessonId,
      courseId: item.courseId,
      itemsDone: 0,
      itemsTotal: lessonItemCount.get(item.lessonId) ?? 0,
      scoreSum: 0,
      status: "in_progress" as const,
      startedAt: occurredAt,
      completedAt: null,
      lastActivityAt: occurredAt,
    };
    if (newlyCompleted) {
      lesson.itemsDone += 1;
      lesson.scoreSum += best;
    } else if (wasCompleted && best > previousBest) {
      lesson.scoreSum += best - previousBest;
    }
    lesson.lastActivityAt = maxIso(lesson.lastActivityAt, occurredAt);
    let lessonCompletedNow = false;
    if (lesson.status !== "completed" && lesson.itemsTotal > 0 && lesson.itemsDone >= lesson.itemsTotal) {
      lesson.status = "completed";
      lesson.completedAt = occurredAt;
      lessonCompletedNow = true;
    }
    lessonState.set(item.lessonId, lesson);

    const course = courseState.get(item.courseId) ?? {
      userId: learner.id,
      courseId: item.courseId,
      institutionId: learner.institutionId,
      lessonsCompleted: 0,
      lessonsTotal: courseLessonCount.get(item.courseId) ?? 0,
      itemsDone: 0,
      xp: 0,
      startedAt: occurredAt,
      completedAt: null,
      lastActivityAt: occurredAt,
    };
    course.xp += xp;
    course.itemsDone += newlyCompleted ? 1 : 0;
    course.lastActivityAt = maxIso(course.lastActivityAt, occurredAt);
    let courseCompletedNow = false;
    if (lessonCompletedNow) {
      course.lessonsCompleted += 1;
      learnerTotals.lessonsCompleted += 1;
      const score = lesson.itemsDone > 0 ? lesson.scoreSum / lesson.itemsDone : 0;
      if (score >= 0.9999) learnerTotals.perfectLessons += 1;
      summary.lessons.push(item.lessonId);
      events.push(
        domainEvent(
          "lesson.completed",
          scope,
          {
            user_id: learner.id,
            lesson_id: item.lessonId,
            course_id: item.courseId,
            score: round(score),
            items: lesson.itemsTotal,
            completed_at: occurredAt,
          },
          now,
        ),
      );
      if (!course.completedAt && course.lessonsTotal > 0 && course.lessonsCompleted >= course.lessonsTotal) {
        course.completedAt = occurredAt;
        courseCompletedNow = true;
        learnerTotals.coursesCompleted += 1;
        summary.courses.push(item.courseId);
        events.push(
          domainEvent(
            "course.completed",
            scope,
            { user_id: learner.id, course_id: item.courseId, xp: course.xp, completed_at: occurredAt },
            now,
          ),
        );
      }
    }
    courseState.set(item.courseId, course);

    learnerTotals.xpTotal += xp;
    learnerTotals.attempts += 1;
    learnerTotals.correct += attempt.correct ? 1 : 0;
    learnerTotals.seconds += attempt.duration_seconds;
    learnerTotals.itemsCompleted += newlyCompleted ? 1 : 0;
    summary.xp += xp;

    bump(daily, local.day, {
      attempts: 1,
      itemsCompleted: newlyCompleted ? 1 : 0,
      correct: attempt.correct ? 1 : 0,
      xp,
      seconds: attempt.duration_seconds,
    });
    const hourKey = `${local.weekday}:${local.hour}`;
    const slot = hourly.get(hourKey) ?? { weekday: local.weekday, hour: local.hour, seconds: 0, attempts: 0 };
    slot.seconds += attempt.duration_seconds;
    slot.attempts += 1;
    hourly.set(hourKey, slot);
    const evidenceKey = `${item.skill}:${item.cefrLevel}`;
    const delta = evidenceDelta.get(evidenceKey) ?? {
      skill: item.skill,
      cefrLevel: item.cefrLevel,
      attempts: 0,
      correct: 0,
      scoreSum: 0,
    };
    delta.attempts += 1;
    delta.correct += attempt.correct ? 1 : 0;
    delta.scoreSum += attempt.score;
    evidenceDelta.set(evidenceKey, delta);
    if (xp > 0) weekly.set(weekOf(local.day), (weekly.get(weekOf(local.day)) ?? 0) + xp);
    activeDays.add(local.day);

    const run = streaks(activeDays);
    learnerTotals.longestStreak = Math.max(learnerTotals.longestStreak, run.longest);
    const newlyUnlocked = reachedAchievements(learnerTotals).filter((code) => !already.has(code));
    for (const code of newlyUnlocked) {
      already.add(code);
      summary.achievements.push(code);
      const definition = ACHIEVEMENTS.find((a) => a.code === code)!;
      events.push(
        domainEvent(
          "achievement.unlocked",
          scope,
          { user_id: learner.id, code, name: definition.name, unlocked_at: occurredAt },
          now,
        ),
      );
    }

    attemptRows.push({
      id: attempt.id,
      userId: learner.id,
      institutionId: learner.institutionId,
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
      xpAwarded: xp,
      recordedAt: now,
    });
    outcomes.set(attempt.id, {
      id: attempt.id,
      status: "recorded",
      xp_gained: xp,
      item_completed: newlyCompleted,
      lesson: {
        id: item.lessonId,
        status: lesson.status,
        items_done: lesson.itemsDone,
        items_total: lesson.itemsTotal,
        percent: lesson.itemsTotal > 0 ? Math.round((lesson.itemsDone / lesson.itemsTotal) * 100) : 0,
      },
      course_completed: courseCompletedNow,
      achievements_unlocked: newlyUnlocked,
    });
  }

  // --- streaks and CEFR after the whole batch ---------------------------------------------------
  const run = streaks(activeDays);
  const streakNow = currentStreak(run.latestRun, run.latestDay, today);
  const milestonesAnnounced = { ...(before?.streakMilestones ?? {}) };
  // Only a batch that records something may announce: its learner_stats row, written in the same
  // batch, then remembers the announcement, so a resend (all duplicates) never repeats it.
  if (attemptRows.length > 0 && streakNow > 0) {
    for (const milestone of streakMilestonesDue(
      run,
      days.length === ACTIVE_DAYS_READ ? days.at(-1)!.day : null,
      milestonesAnnounced,
    )) {
      milestonesAnnounced[milestone.days] = milestone.day;
      events.push(
        domainEvent(
          "streak.milestone",
          scope,
          { user_id: learner.id, days: milestone.days, day: milestone.day },
          now,
        ),
      );
    }
  }
  const mergedEvidence = mergeEvidence(evidenceRows, [...evidenceDelta.values()]);
  const previousLevels = before?.cefrLevels ?? {};
  const report = cefrReport(mergedEvidence);
  const levels: Record<string, string> = {};
  for (const skill of report.skills) if (skill.level) levels[skill.skill] = skill.level;
  if (report.overall) levels.overall = report.overall;
  for (const key of new Set([...Object.keys(previousLevels), ...Object.keys(levels)])) {
    if ((previousLevels[key] ?? null) !== (levels[key] ?? null)) {
      events.push(
        domainEvent(
          "cefr.level_changed",
          scope,
          { user_id: learner.id, skill: key, from: previousLevels[key] ?? null, to: levels[key] ?? null },
          now,
        ),
      );
    }
  }

  // --- one batch: attempts, aggregates, events --------------------------------------------------
  const touchedItems = new Set(attemptRows.map((a) => a.trainingItemId));
  const touchedLessons = new Set(attemptRows.map((a) => a.lessonId));
  const touchedCourses = new Set(attemptRows.map((a) => a.courseId));
  const statements = writeStatements(db, {
    attempts: attemptRows,
    items: [...itemState.values()].filter((s) => touchedItems.has(s.trainingItemId)),
    lessons: [...lessonState.values()].filter((l) => touchedLessons.has(l.lessonId)),
    courses: [...courseState.values()].filter((c) => touchedCourses.has(c.courseId)),
    daily: [...daily].map(([day, d]) => ({ userId: learner.id, day, ...d })),
    studyTime: [...hourly.values()].map((h) => ({ userId: learner.id, ...h })),
    evidence: [...evidenceDelta.values()].map((e) => ({ userId: learner.id, ...e })),
    weeklyXp: [...weekly].map(([week, xp]) => ({
      week,
      userId: learner.id,
      institutionId: learner.institutionId,
      xp,
    })),
    rank:
      attemptRows.length > 0
        ? {
            userId: learner.id,
            institutionId: learner.institutionId,
            // The all-time boards move when the total changes or learner_stats re-homes the learner.
            xpTotal:
              summary.xp > 0 || (before && before.institutionId !== learner.institutionId)
                ? learnerTotals.xpTotal
                : null,
            weeks: [...weekly],
          }
        : null,
    stats:
      attemptRows.length > 0
        ? {
            userId: learner.id,
            institutionId: learner.institutionId,
            ...learnerTotals,
            currentStreak: run.latestRun,
            lastActiveDay: run.latestDay,
            cefrLevels: levels,
            streakMilestones: milestonesAnnounced,
            updatedAt: now,
          }
        : null,
    counters: {
      attempts: attemptRows.length,
      items_completed: attemptRows.filter((a) => outcomes.get(a.id)?.item_completed).length,
      lessons_completed: summary.lessons.length,
      courses_completed: summary.courses.length,
    },
    achievements: events
      .filter((e) => e.type === "achievement.unlocked")
      .map((e) => ({
        userId: learner.id,
        code: e.payload.code as string,
        unlockedAt: e.payload.unlocked_at as string,
      })),
    events,
  });

  // The institution's analytics rollup, in the same batch as the attempts it counts.
  statements.push(
    ...activityRollupStatements(db, {
      userId: learner.id,
      institutionId: learner.institutionId,
      attempts: attemptRows,
      completedCourse: (id) => outcomes.get(id)?.course_completed ?? false,
      lessonStatusAfter: (id) => outcomes.get(id)?.lesson?.status ?? null,
      lessonsCompleted: summary.lessons,
    }),
  );
  if (statements.length > 0) await db.batch(statements as [Statement, ...Statement[]]);

  return {
    ok: true,
    outcomes: input.map((a) => outcomes.get(a.id)!),
    summary: {
      recorded: attemptRows.length,
      duplicates: input.length - attemptRows.length,
      xp_gained: summary.xp,
      xp_total: learnerTotals.xpTotal,
      lessons_completed: summary.lessons,
      courses_completed: summary.courses,
      achievements_unlocked: summary.achievements,
      current_streak: streakNow,
      events: events.map((e) => ({ id: e.id!, type: e.type })),
    },
  };
}

/**
 * The milestones the current run (ending today or yesterday) has reached but not announced, each with
 * the day the run reached it. Announcements are remembered by that day: active days are never removed,
 * so an announced day stays inside whatever run later contains it — a run that back-filled days extend
 * or merge with an earlier one keeps what either part announced. `horizon` is the oldest active day
 * read when there may be older ones: a run reaching back to it may have begun earlier still.
 */
function streakMilestonesDue(
  run: { latestRun: number; latestDay: string | null },
  horizon: string | null,
  announced: Record<string, string>,
): { days: number; day: string }[] {
  if (!run.latestDay) return [];
  const start = addDays(run.latestDay, 1 - run.latestRun);
  const knownStart = horizon !== null && start <= horizon ? "" : start;
  return STREAK_MILESTONES.filter((days) => days <= run.latestRun)
    .filter((days) => announced[days] === undefined || announced[days] < knownStart)
    .map((days) => ({ days, day: addDays(start, days - 1) }));
}

function maxIso(a: string | null | undefined, b: string): string {
  return !a || b > a ? b : a;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function bump<T extends Record<string, number>>(map: Map<string, T>, key: string, delta: T): void {
  const current = map.get(key);
  if (!current) {
    map.set(key, { ...delta });
    return;
  }
  for (const k of Object.keys(delta) as (keyof T)[]) (current[k] as number) += delta[k] as number;
}

function mergeEvidence(rows: SkillEvidenceRow[], deltas: SkillEvidenceRow[]): SkillEvidenceRow[] {
  const merged = new Map(rows.map((r) => [`${r.skill}:${r.cefrLevel}`, { ...r }]));
  for (const d of deltas) {
    const key = `${d.skill}:${d.cefrLevel}`;
    const row = merged.get(key);
    if (row) {
      row.attempts += d.attempts;
      row.correct += d.correct;
      row.scoreSum += d.scoreSum;
    } else merged.set(key, { ...d });
  }
  return [...merged.values()];
}
