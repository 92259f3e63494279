import { getTableColumns, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import {
  achievements,
  attempts,
  courseProgress,
  dailyActivity,
  itemProgress,
  learnerStats,
  lessonProgress,
  outboxEvents,
  platformCounters,
  skillEvidence,
  studyTime,
  weeklyXp,
} from "../../db/schema";
import { chunk, rowsPerStatement, type Statement } from "../../platform/batch";
import type { Database } from "../../platform/db";
import type { OutboxRow } from "../../platform/events";
import { type RankMove, rankMoveStatement } from "./rank";

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
  events: OutboxRow[];
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
): Statement[] {
  if (rows.length === 0) return [];
  const set = Object.fromEntries(
    Object.entries(columns).map(([key, column]) => {
      const incoming = sql.raw(`excluded.${column.name}`);
      return [key, mode === "replace" ? incoming : sql`${column} + ${incoming}`];
    }),
  );
  return chunk(rows, rowsPerStatement(Object.keys(rows[0]!).length)).map(
    (part) =>
      db
        .insert(table)
        .values(part as never)
        .onConflictDoUpdate({ target, set }) as unknown as Statement,
  );
}

/** The statements of one recording, for a single atomic `db.batch`. */
export function writeStatements(db: Database, changes: Changes): Statement[] {
  const statements: Statement[] = [];
  for (const rows of chunk(changes.attempts, rowsPerStatement(15)))
    statements.push(db.insert(attempts).values(rows));
  statements.push(
    ...upserts(
      db,
      itemProgress,
      changes.items,
      [itemProgress.userId, itemProgress.trainingItemId],
      "replace",
      {
        bestScore: itemProgress.bestScore,
        attempts: itemProgress.attempts,
        completedAt: itemProgress.completedAt,
        lastAttemptAt: itemProgress.lastAttemptAt,
      },
    ),
    ...upserts(
      db,
      lessonProgress,
      changes.lessons,
      [lessonProgress.userId, lessonProgress.lessonId],
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
    ...upserts(db, dailyActivity, changes.daily, [dailyActivity.userId, dailyActivity.day], "add", {
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
      { seconds: studyTime.seconds, attempts: studyTime.attempts },
    ),
    ...upserts(
      db,
      skillEvidence,
      changes.evidence,
      [skillEvidence.userId, skillEvidence.skill, skillEvidence.cefrLevel],
      "add",
      { attempts: skillEvidence.attempts, correct: skillEvidence.correct, scoreSum: skillEvidence.scoreSum },
    ),
  );
  // Reads weekly_xp and learner_stats as they are before the two upserts below.
  const rank = changes.rank && rankMoveStatement(db, changes.rank);
  if (rank) statements.push(rank);
  statements.push(
    ...upserts(db, weeklyXp, changes.weeklyXp, [weeklyXp.week, weeklyXp.userId], "add", { xp: weeklyXp.xp }),
  );
  if (changes.stats) {
    const { userId: _key, ...replaced } = getTableColumns(learnerStats);
    statements.push(
      ...upserts(db, learnerStats, [changes.stats], [learnerStats.userId], "replace", replaced),
    );
  }
  const counters = Object.entries(changes.counters)
    .filter(([, value]) => value > 0)
    .map(([name, value]) => ({ name, value }));
  statements.push(
    ...upserts(db, platformCounters, counters, [platformCounters.name], "add", {
      value: platformCounters.value,
    }),
  );
  for (const row of changes.achievements)
    statements.push(db.insert(achievements).values(row).onConflictDoNothing());
  for (const rows of chunk(changes.events, rowsPerStatement(6)))
    statements.push(db.insert(outboxEvents).values(rows));
  return statements;
}
