import { getTableColumns, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { requiredNumber } from "../../../db/numbers";
import {
  achievements,
  attempts,
  courseProgress,
  dailyActivity,
  itemProgress,
  learnerStats,
  lessonProgress,
  platformCounters,
  skillEvidence,
  studyTime,
  weeklyXp,
} from "../../../db/schema";
import { chunk, rowsPerStatement } from "../../../platform/batch";
import type { Database } from "../../../platform/db";
import type { Writable } from "../../../platform/service/commit";
import { type RankMove, rankMoveStatement } from "../rank";
import type { LearnerAfter } from "./derive-learner";
import type { LearnerState } from "./load";
import type { Tally } from "./tally";

/** Everything one recording changes: new rows, replaced per-learner state, and increments. */
export interface Changes {
  attempts: (typeof attempts.$inferInsert)[];
  /** Per-learner state, computed under the learner's serialisation: written as the new values. */
  items: (typeof itemProgress.$inferInsert)[];
  lessons: (typeof lessonProgress.$inferInsert)[];
  courses: (typeof courseProgress.$inferInsert)[];
  stats: typeof learnerStats.$inferInsert | null;
  /** Deltas: added to what is stored, so they commute with anything else adding to the same rows. */
  daily: (typeof dailyActivity.$inferInsert)[];
  studyTime: (typeof studyTime.$inferInsert)[];
  evidence: (typeof skillEvidence.$inferInsert)[];
  weeklyXp: (typeof weeklyXp.$inferInsert)[];
  /** The learner's move on the leaderboards' rank counts, written before weekly_xp and learner_stats. */
  rank: RankMove | null;
  counters: Record<string, number>;
  achievements: (typeof achievements.$inferInsert)[];
}

/** The changes of a derived batch: the state it touched, its deltas, counters and achievements. */
export function collectChanges(tally: Tally, after: LearnerAfter, state: LearnerState): Changes {
  const { learner, attemptRows } = tally;
  const touchedItems = new Set(attemptRows.map((a) => a.trainingItemId));
  const touchedLessons = new Set(attemptRows.map((a) => a.lessonId));
  const touchedCourses = new Set(attemptRows.map((a) => a.courseId));
  const recordedAny = attemptRows.length > 0;
  // Only a batch that records anything writes rows by the learner's number.
  const userNumber = recordedAny ? requiredNumber(state.learnerNumber, `learner ${learner.id}`) : 0;
  return {
    attempts: attemptRows,
    items: [...tally.items]
      .filter(([itemId]) => touchedItems.has(itemId))
      .map(([, progress]) => ({ userNumber, ...progress })),
    lessons: [...tally.lessons.values()]
      .filter((l) => touchedLessons.has(l.lessonId))
      .map(({ lessonId, courseId, ...progress }) => ({
        userNumber,
        lessonNumber: requiredNumber(state.lessonNumbers.get(lessonId), `lesson ${lessonId}`),
        courseNumber: requiredNumber(state.courseNumbers.get(courseId), `course ${courseId}`),
        ...progress,
      })),
    courses: [...tally.courses.values()].filter((c) => touchedCourses.has(c.courseId)),
    daily: [...tally.daily].map(([day, d]) => ({ userNumber, day, ...d })),
    studyTime: [...tally.hourly.values()].map((h) => ({ userId: learner.id, ...h })),
    evidence: [...tally.evidence.values()].map((e) => ({ userId: learner.id, ...e })),
    weeklyXp: [...tally.weekly].map(([week, xp]) => ({
      week,
      userId: learner.id,
      institutionId: learner.institutionId,
      xp,
    })),
    rank: recordedAny ? rankMoveOf(tally, state) : null,
    stats: recordedAny
      ? {
          userId: learner.id,
          institutionId: learner.institutionId,
          ...tally.totals,
          currentStreak: after.run.latestRun,
          lastActiveDay: after.run.latestDay,
          cefrLevels: after.cefrLevels,
          streakMilestones: after.milestonesAnnounced,
          updatedAt: tally.now,
        }
      : null,
    counters: {
      attempts: attemptRows.length,
      items_completed: attemptRows.filter((a) => tally.outcomes.get(a.id)?.item_completed).length,
      lessons_completed: tally.happenings.filter((h) => h.type === "lesson.completed").length,
      courses_completed: tally.happenings.filter((h) => h.type === "course.completed").length,
    },
    achievements: tally.happenings.flatMap((h) =>
      h.type === "achievement.unlocked" ? [{ userId: learner.id, code: h.code, unlockedAt: h.at }] : [],
    ),
  };
}

function rankMoveOf(tally: Tally, state: LearnerState): RankMove {
  const { learner } = tally;
  const rehomed = state.stats !== undefined && state.stats.institutionId !== learner.institutionId;
  return {
    userId: learner.id,
    institutionId: learner.institutionId,
    // The all-time boards move when the total changes or learner_stats re-homes the learner.
    xpTotal: tally.xpGained > 0 || rehomed ? tally.totals.xpTotal : null,
    weeks: [...tally.weekly],
  };
}

/**
 * `INSERT … ON CONFLICT DO UPDATE`, multi-row within D1's 100 bound parameters per statement.
 * `replace` writes the new values; `add` adds them to what is stored.
 */
function upserts(
  db: Database,
  table: SQLiteTable,
  rows: Record<string, unknown>[],
  target: SQLiteColumn[],
  mode: "replace" | "add",
  columns: Record<string, SQLiteColumn>,
): Writable[] {
  const [first] = rows;
  if (!first) return [];
  const set = Object.fromEntries(
    Object.entries(columns).map(([key, column]) => {
      const incoming = sql.raw(`excluded.${column.name}`);
      return [key, mode === "replace" ? incoming : sql`${column} + ${incoming}`];
    }),
  );
  return chunk(rows, rowsPerStatement(Object.keys(first).length)).map(
    (part) =>
      db
        .insert(table)
        .values(part as never)
        .onConflictDoUpdate({ target, set }) as unknown as Writable,
  );
}

/**
 * The statements of one recording, handed with its events to `commit` (platform/service/commit.ts),
 * which runs them and the outbox rows as one atomic D1 batch. The order matters once: the rank move
 * reads weekly_xp and learner_stats as they are before their upserts.
 */
export function writeStatements(db: Database, changes: Changes): Writable[] {
  const rank = changes.rank && rankMoveStatement(db, changes.rank);
  return [
    ...chunk(changes.attempts, rowsPerStatement(15)).map((rows) => db.insert(attempts).values(rows)),
    ...progressUpserts(db, changes),
    ...activityUpserts(db, changes),
    ...(rank ? [rank] : []),
    ...upserts(db, weeklyXp, changes.weeklyXp, [weeklyXp.week, weeklyXp.userId], "add", { xp: weeklyXp.xp }),
    ...statsUpserts(db, changes.stats),
    ...counterUpserts(db, changes.counters),
    ...changes.achievements.map((row) => db.insert(achievements).values(row).onConflictDoNothing()),
  ];
}

/** The learner's item, lesson and course progress: replaced by the values derived under serialisation. */
function progressUpserts(db: Database, changes: Changes): Writable[] {
  return [
    ...upserts(
      db,
      itemProgress,
      changes.items,
      [itemProgress.userNumber, itemProgress.itemNumber],
      "replace",
      { bestScore: itemProgress.bestScore, completedAt: itemProgress.completedAt },
    ),
    ...upserts(
      db,
      lessonProgress,
      changes.lessons,
      [lessonProgress.userNumber, lessonProgress.lessonNumber],
      "replace",
      {
        itemsDone: lessonProgress.itemsDone,
        itemsTotal: lessonProgress.itemsTotal,
        scoreSum: lessonProgress.scoreSum,
        status: lessonProgress.status,
        completedAt: lessonProgress.completedAt,
        lastActivityAt: lessonProgress.lastActivityAt,
      },
    ),
    ...upserts(
      db,
      courseProgress,
      changes.courses,
      [courseProgress.userId, courseProgress.courseId],
      "replace",
      {
        lessonsCompleted: courseProgress.lessonsCompleted,
        lessonsTotal: courseProgress.lessonsTotal,
        itemsDone: courseProgress.itemsDone,
        xp: courseProgress.xp,
        completedAt: courseProgress.completedAt,
        lastActivityAt: courseProgress.lastActivityAt,
      },
    ),
  ];
}

/** Daily activity, study time and skill evidence: deltas added to what is stored. */
function activityUpserts(db: Database, changes: Changes): Writable[] {
  return [
    ...upserts(db, dailyActivity, changes.daily, [dailyActivity.userNumber, dailyActivity.day], "add", {
      attempts: dailyActivity.attempts,
      itemsCompleted: dailyActivity.itemsCompleted,
      correct: dailyActivity.correct,
      xp: dailyActivity.xp,
      seconds: dailyActivity.seconds,
    }),
    ...upserts(
      db,
      studyTime,
      changes.studyTime,
      [studyTime.userId, studyTime.weekday, studyTime.hour],
      "add",
      {
        seconds: studyTime.seconds,
        attempts: studyTime.attempts,
      },
    ),
    ...upserts(
      db,
      skillEvidence,
      changes.evidence,
      [skillEvidence.userId, skillEvidence.skill, skillEvidence.cefrLevel],
      "add",
      { attempts: skillEvidence.attempts, correct: skillEvidence.correct, scoreSum: skillEvidence.scoreSum },
    ),
  ];
}

function statsUpserts(db: Database, stats: Changes["stats"]): Writable[] {
  if (!stats) return [];
  const { userId: _key, ...replaced } = getTableColumns(learnerStats);
  return upserts(db, learnerStats, [stats], [learnerStats.userId], "replace", replaced);
}

function counterUpserts(db: Database, counters: Changes["counters"]): Writable[] {
  const rows = Object.entries(counters)
    .filter(([, value]) => value > 0)
    .map(([name, value]) => ({ name, value }));
  return upserts(db, platformCounters, rows, [platformCounters.name], "add", {
    value: platformCounters.value,
  });
}
