import { sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { requiredNumber } from "../../../db/numbers";
import { institutionActivityDays } from "../../../db/schema";
import { chunk, rowsPerStatement } from "../../../platform/batch";
import type { Database } from "../../../platform/db";
import type { Writable } from "../../../platform/service/commit";
import type { LearnerState } from "./load";
import type { Tally } from "./tally";

/*
 * The recording's step that keeps `institution_activity_days`, the rollup that institutions'
 * analytics reads. Progress owns the writing: it is part of recording attempts and runs in the
 * recording's own D1 batch. institutions/analytics only reads the table, so no import runs from
 * progress up into institutions. What the analytics read besides (per-period, per-course and per-group
 * totals, distinct learners per day, week and month, the learners' (learner, course) pairs) is derived
 * from this table by SQLite triggers inside the same statement (migration
 * `…_institution_analytics_triggers`), so this step stays one upsert per day and course. The rows
 * carry numbers (the institution's, the learner's, the course's; docs/design/capacity.md, "Integer
 * keys"), read with the learner's state: no statement of their own.
 */

/** What the rollup needs of one recorded attempt. */
export interface RecordedAttempt {
  id: string;
  localDay: string;
  lessonId: string;
  courseId: string;
  durationSeconds: number;
  xpAwarded: number;
}

export interface RecordingForRollup {
  userNumber: number;
  /** Null: the learner belongs to no institution, and nothing is counted. */
  institutionNumber: number | null;
  /** The number of a course of the attempts. */
  courseNumber: (courseId: string) => number;
  /** The attempts recorded (not the duplicates), in the order the recording derived them. */
  attempts: readonly RecordedAttempt[];
  /** Per attempt id, whether it completed its course. */
  completedCourse: (attemptId: string) => boolean;
  /** Per attempt id, the status of its lesson right after it. */
  lessonStatusAfter: (attemptId: string) => string | null;
  /** The lessons this recording completed. */
  lessonsCompleted: readonly string[];
}

type Row = typeof institutionActivityDays.$inferInsert;

/** The recording's increments of the institution's activity rollup, one row per day and course. */
export function activityIncrements(recording: RecordingForRollup): Row[] {
  const { institutionNumber, userNumber } = recording;
  if (institutionNumber === null) return [];
  const pending = new Set(recording.lessonsCompleted);
  const rows = new Map<string, Row>();
  for (const attempt of recording.attempts) {
    const key = `${attempt.localDay}|${attempt.courseId}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        institutionNumber,
        day: attempt.localDay,
        userNumber,
        courseNumber: recording.courseNumber(attempt.courseId),
        attempts: 0,
        seconds: 0,
        xp: 0,
        lessonsCompleted: 0,
        coursesCompleted: 0,
      };
      rows.set(key, row);
    }
    row.attempts += 1;
    row.seconds += attempt.durationSeconds;
    row.xp += attempt.xpAwarded;
    // The first attempt after which a lesson completed in this recording reads completed is the one that completed it.
    if (pending.has(attempt.lessonId) && recording.lessonStatusAfter(attempt.id) === "completed") {
      pending.delete(attempt.lessonId);
      row.lessonsCompleted += 1;
    }
    if (recording.completedCourse(attempt.id)) row.coursesCompleted += 1;
  }
  return [...rows.values()];
}

/**
 * The rollup step of a recording: increments added to what is stored, so that they commute with any
 * other recording of the same institution and day. Runs in the recording's own D1 batch.
 */
export function activityRollupStatements(db: Database, recording: RecordingForRollup): Writable[] {
  const rows = activityIncrements(recording);
  const t = institutionActivityDays;
  const add = (column: SQLiteColumn) => sql`${column} + ${sql.raw(`excluded.${column.name}`)}`;
  return chunk(rows, rowsPerStatement(9)).map((part) =>
    db
      .insert(t)
      .values(part)
      .onConflictDoUpdate({
        target: [t.institutionNumber, t.userNumber, t.day, t.courseNumber],
        set: {
          attempts: add(t.attempts),
          seconds: add(t.seconds),
          xp: add(t.xp),
          lessonsCompleted: add(t.lessonsCompleted),
          coursesCompleted: add(t.coursesCompleted),
        },
      }),
  );
}

/**
 * The rollup step of the progress recording, over the recording's tally and the numbers read with
 * the learner's state. A recording that records anything for a learner of an institution needs all
 * of them: one missing fails the recording loudly rather than counting nowhere.
 */
export function institutionRollupStep(db: Database, tally: Tally, state: LearnerState): Writable[] {
  const { learner } = tally;
  if (!learner.institutionId || tally.attemptRows.length === 0) return [];
  return activityRollupStatements(db, {
    userNumber: requiredNumber(state.learnerNumber, `learner ${learner.id}`),
    institutionNumber: requiredNumber(state.institutionNumber, `institution ${learner.institutionId}`),
    courseNumber: (id) => requiredNumber(state.courseNumbers.get(id), `course ${id}`),
    attempts: tally.attemptRows,
    completedCourse: (id) => tally.outcomes.get(id)?.course_completed ?? false,
    lessonStatusAfter: (id) => tally.outcomes.get(id)?.lesson?.status ?? null,
    lessonsCompleted: tally.happenings.flatMap((h) => (h.type === "lesson.completed" ? [h.lessonId] : [])),
  });
}
