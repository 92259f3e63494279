import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import { institutionNumberOf, itemNumbersIn, userNumberOf } from "../../../db/numbers";
import {
  achievements,
  attempts,
  type CefrLevel,
  courseProgress,
  courses,
  dailyActivity,
  itemProgress,
  learnerStats,
  lessonProgress,
  lessons,
  type Skill,
  skillEvidence,
  trainingItems,
} from "../../../db/schema";
import type { Database } from "../../../platform/db";
import type { SkillEvidenceRow } from "../rules";
import type { AttemptInput } from "./types";

/** The learner's latest active days read for the streaks (a little over the longest milestone). */
export const ACTIVE_DAYS_READ = 400;

export type ItemRow = {
  id: string;
  number: number | null;
  lessonId: string;
  courseId: string;
  xp: number;
  skill: Skill;
  cefrLevel: CefrLevel;
  published: boolean;
};

/** The learner's progress on an item (the tally keys it by the item's id; the learner is implied). */
export type ItemProgressRow = Omit<typeof itemProgress.$inferSelect, "userNumber">;
/**
 * The learner's progress in a lesson, by the lesson's and its course's ids (the tally keys it by the
 * lesson's id; the learner is implied); stored by their numbers.
 */
export type LessonProgressRow = Omit<
  typeof lessonProgress.$inferSelect,
  "userNumber" | "lessonNumber" | "courseNumber"
> & { lessonId: string; courseId: string };
export type CourseProgressRow = typeof courseProgress.$inferSelect;
export type LearnerStatsRow = typeof learnerStats.$inferSelect;

/** Everything recording a batch reads: the items sent, and the learner's state they change. */
export interface LearnerState {
  /** The learner's number (`users.number`), what the rows kept for good carry; null for no such user. */
  learnerNumber: number | null;
  /** The learner's institution's number (`institutions.number`); null without one. */
  institutionNumber: number | null;
  /** The numbers of the batch's lessons and courses, by id: what their progress rows are stored by. */
  lessonNumbers: Map<string, number | null>;
  courseNumbers: Map<string, number | null>;
  itemById: Map<string, ItemRow>;
  /** Attempts of this batch's ids that are already recorded (for this learner or another). */
  recorded: { id: string; userId: string }[];
  stats: LearnerStatsRow | undefined;
  unlocked: Set<string>;
  /** The latest active days, newest first, at most ACTIVE_DAYS_READ. */
  recentDays: string[];
  items: Map<string, ItemProgressRow>;
  lessons: Map<string, LessonProgressRow>;
  lessonItemCount: Map<string, number>;
  courses: Map<string, CourseProgressRow>;
  courseLessonCount: Map<string, number>;
  evidence: SkillEvidenceRow[];
}

/** Reads the state in one D1 batch (one round trip, one consistent snapshot). */
export async function loadLearnerState(
  db: Database,
  learner: { id: string; institutionId: string | null },
  input: AttemptInput[],
): Promise<LearnerState> {
  const learnerId = learner.id;
  const itemIds = JSON.stringify([...new Set(input.map((a) => a.training_item_id))]);
  const itemsInBatch = sql`(SELECT value FROM json_each(${itemIds}))`;
  const learnerNumber = userNumberOf(learnerId);
  const institutionNumber = learner.institutionId
    ? institutionNumberOf(learner.institutionId)
    : sql<number | null>`NULL`;
  const [items, recorded, stats, unlocked, days, ...progress] = await db.batch([
    db
      .select({
        id: trainingItems.id,
        number: trainingItems.number,
        // Read with the items rather than on their own: a valid batch has at least one, and the
        // recording stays two round trips.
        learnerNumber,
        institutionNumber,
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
    recordedAttempts(db, input),
    db.select().from(learnerStats).where(eq(learnerStats.userId, learnerId)),
    db.select({ code: achievements.code }).from(achievements).where(eq(achievements.userId, learnerId)),
    db
      .select({ day: dailyActivity.day })
      .from(dailyActivity)
      .where(eq(dailyActivity.userNumber, learnerNumber))
      .orderBy(sql`${dailyActivity.day} DESC`)
      .limit(ACTIVE_DAYS_READ),
    ...progressQueries(db, learnerId, itemsInBatch),
  ]);
  const [itemStates, lessonStates, lessonTotals, courseStates, courseTotals, evidence] = progress;
  const itemIdOf = new Map(items.map((i) => [i.number, i.id]));
  const lessonIdOf = new Map(lessonTotals.map((l) => [l.number, l.id]));
  const courseIdOf = new Map(courseTotals.map((c) => [c.number, c.id]));
  return {
    learnerNumber: items[0]?.learnerNumber ?? null,
    institutionNumber: items[0]?.institutionNumber ?? null,
    lessonNumbers: new Map(lessonTotals.map((l) => [l.id, l.number])),
    courseNumbers: new Map(courseTotals.map((c) => [c.id, c.number])),
    itemById: new Map(items.map(({ learnerNumber: _, institutionNumber: __, ...i }) => [i.id, i])),
    recorded,
    stats: stats[0],
    unlocked: new Set(unlocked.map((u) => u.code)),
    recentDays: days.map((d) => d.day),
    items: new Map(itemStates.map(({ userNumber: _, ...s }) => [itemIdOf.get(s.itemNumber) ?? "", s])),
    lessons: new Map(
      lessonStates.map(({ userNumber: _, lessonNumber, courseNumber, ...s }) => {
        const lessonId = lessonIdOf.get(lessonNumber) ?? "";
        return [lessonId, { lessonId, courseId: courseIdOf.get(courseNumber) ?? "", ...s }];
      }),
    ),
    lessonItemCount: new Map(lessonTotals.map((l) => [l.id, l.itemCount])),
    courses: new Map(courseStates.map((s) => [s.courseId, { ...s }])),
    courseLessonCount: new Map(courseTotals.map((c) => [c.id, c.lessonCount])),
    evidence: evidence.map((e) => ({ ...e })),
  };
}

/**
 * The batch's attempt ids already recorded, for any learner: one seek each on the primary key, which
 * is the table itself (`attempts` is WITHOUT ROWID). This is what keeps an attempt id unique: a resend
 * is found whatever its other fields, and another learner's id is refused (409).
 */
export function recordedAttempts(db: Database, input: Pick<AttemptInput, "id">[]) {
  const attemptIds = sql`(SELECT value FROM json_each(${JSON.stringify(input.map((a) => a.id))}))`;
  return db
    .select({ id: attempts.id, userId: attempts.userId })
    .from(attempts)
    .where(inArray(attempts.id, attemptIds));
}

/** The learner's progress on the items, lessons and courses of the batch, and all their skill evidence. */
function progressQueries(db: Database, learnerId: string, itemsInBatch: SQL) {
  const lessonsInBatch = sql`(SELECT lesson_id FROM training_items WHERE id IN ${itemsInBatch})`;
  const lessonNumbersInBatch = sql`(SELECT number FROM lessons WHERE id IN ${lessonsInBatch})`;
  const coursesInBatch = sql`(SELECT course_id FROM training_items WHERE id IN ${itemsInBatch})`;
  return [
    db
      .select()
      .from(itemProgress)
      .where(
        and(
          eq(itemProgress.userNumber, userNumberOf(learnerId)),
          inArray(itemProgress.itemNumber, itemNumbersIn(itemsInBatch)),
        ),
      ),
    db
      .select()
      .from(lessonProgress)
      .where(
        and(
          eq(lessonProgress.userNumber, userNumberOf(learnerId)),
          inArray(lessonProgress.lessonNumber, lessonNumbersInBatch),
        ),
      ),
    db
      .select({ id: lessons.id, number: lessons.number, itemCount: lessons.itemCount })
      .from(lessons)
      .where(inArray(lessons.id, lessonsInBatch)),
    db
      .select()
      .from(courseProgress)
      .where(and(eq(courseProgress.userId, learnerId), inArray(courseProgress.courseId, coursesInBatch))),
    db
      .select({ id: courses.id, number: courses.number, lessonCount: courses.lessonCount })
      .from(courses)
      .where(inArray(courses.id, coursesInBatch)),
    // All of the learner's evidence (at most 6 skills × 6 levels): the CEFR levels are recomputed
    // for every skill, not only those of this batch.
    db.select().from(skillEvidence).where(eq(skillEvidence.userId, learnerId)),
  ] as const;
}
