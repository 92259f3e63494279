import { and, asc, desc, eq, gte, isNull, lte, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { userNumberOf } from "../../../../db/numbers";
import {
  CEFR_LEVELS,
  type CefrLevel,
  courseProgress,
  courses,
  dailyActivity,
  lessonProgress,
  lessons,
  skillEvidence,
  studyTime,
} from "../../../../db/schema";
import type { Database } from "../../../../platform/db";
import type { ServiceContext } from "../../../../platform/service/context";
import { evidenceColumns } from "../service";
import { MAX_RECOMMENDATIONS } from "./schemas";

/** The read behind the learning insights: one D1 batch. */

/** A "start here" candidate: the first lesson of a published course the learner has not started. */
export interface StartingRow {
  level: CefrLevel;
  courseId: string;
  courseTitle: string;
  lessonId: string;
  lessonTitle: string;
  position: number;
}

/**
 * Evidence, the daily activity of the trend window, the study-time grid, and both kinds of
 * recommendation in one batch: the "continue" rows (courses started and not completed) and the
 * "start here" rows. The learner's overall CEFR level is only known once the evidence is read, so
 * the second statement ranks candidates for every level at once (at most MAX_RECOMMENDATIONS per
 * level, over the published catalogue) and the caller keeps those of the learner's level, and only
 * when there is nothing to continue.
 */
export async function readInsights(
  ctx: ServiceContext,
  input: { learnerId: string; trendFrom: string; today: string },
) {
  const { db } = ctx;
  const { learnerId, trendFrom, today } = input;
  // Every selected column gets a distinct name: D1 returns rows as objects, so two columns both
  // called `id` (a course's and a lesson's) would collapse into one in a batch.
  const [evidence, days, grid, continuing, startingRows] = await db.batch([
    db.select(evidenceColumns).from(skillEvidence).where(eq(skillEvidence.userId, learnerId)),
    db
      .select({ day: dailyActivity.day, attempts: dailyActivity.attempts, correct: dailyActivity.correct })
      .from(dailyActivity)
      .where(
        and(
          eq(dailyActivity.userNumber, userNumberOf(learnerId)),
          gte(dailyActivity.day, trendFrom),
          lte(dailyActivity.day, today),
        ),
      ),
    // At most 7 × 24 rows.
    db
      .select({ weekday: studyTime.weekday, hour: studyTime.hour, seconds: studyTime.seconds })
      .from(studyTime)
      .where(eq(studyTime.userId, learnerId)),
    continuingQuery(db, learnerId),
    startingQuery(db, learnerId),
  ]);
  return { evidence, days, grid, continuing, starting: startingRows satisfies StartingRow[] };
}

/** "Continue": the published courses started and not completed, each at its first open lesson. */
function continuingQuery(db: Database, learnerId: string) {
  const next = alias(lessons, "next_lesson");
  const previous = alias(lessons, "previous_lesson");
  // The first lesson (by position) of the course that the learner has not completed.
  const firstOpenPosition = sql`(
    SELECT min(l2.position) FROM ${lessons} l2
    LEFT JOIN ${lessonProgress} lp2 ON lp2.user_number = ${userNumberOf(learnerId)} AND lp2.lesson_number = l2.number
    WHERE l2.course_id = ${courseProgress.courseId} AND (lp2.status IS NULL OR lp2.status <> 'completed'))`;
  const previousPosition = sql`(SELECT max(l3.position) FROM ${lessons} l3 WHERE l3.course_id = ${next.courseId} AND l3.position < ${next.position})`;
  return db
    .select({
      courseId: courses.id,
      courseTitle: courses.title,
      lessonId: sql<string>`${next.id}`.as("lesson_id"),
      lessonTitle: sql<string>`${next.title}`.as("lesson_title"),
      position: sql<number>`${next.position}`.as("lesson_position"),
      previousTitle: sql<string | null>`${previous.title}`.as("previous_title"),
    })
    .from(courseProgress)
    .innerJoin(courses, and(eq(courses.id, courseProgress.courseId), eq(courses.published, true)))
    .innerJoin(next, and(eq(next.courseId, courseProgress.courseId), eq(next.position, firstOpenPosition)))
    .leftJoin(previous, and(eq(previous.courseId, next.courseId), eq(previous.position, previousPosition)))
    .where(and(eq(courseProgress.userId, learnerId), isNull(courseProgress.completedAt)))
    .orderBy(desc(courseProgress.lastActivityAt), asc(courseProgress.courseId))
    .limit(MAX_RECOMMENDATIONS);
}

/** "Start here": for every level, the first lessons of the best-fitting published courses not started. */
function startingQuery(db: Database, learnerId: string) {
  // One row per (level, candidate course): the course's first lesson, ranked within each level.
  const first = alias(lessons, "first_lesson");
  const ranked = db
    .select({
      level: sql<CefrLevel>`lv.value`.as("level"),
      courseId: sql<string>`${courses.id}`.as("course_id"),
      courseTitle: sql<string>`${courses.title}`.as("course_title"),
      lessonId: sql<string>`${first.id}`.as("lesson_id"),
      lessonTitle: sql<string>`${first.title}`.as("lesson_title"),
      position: sql<number>`${first.position}`.as("lesson_position"),
      // Courses that start closest to the level first, then by title.
      rank: sql<number>`row_number() OVER (PARTITION BY lv.value ORDER BY ${courses.cefrFrom} DESC, ${courses.title} COLLATE NOCASE, ${courses.id})`.as(
        "rank_in_level",
      ),
    })
    .from(sql`json_each(${JSON.stringify(CEFR_LEVELS)}) lv`)
    .innerJoin(
      courses,
      and(
        eq(courses.published, true),
        sql`${courses.cefrFrom} <= lv.value AND ${courses.cefrTo} >= lv.value`,
      ),
    )
    .innerJoin(
      first,
      and(
        eq(first.courseId, courses.id),
        eq(
          first.position,
          sql`(SELECT min(l4.position) FROM ${lessons} l4 WHERE l4.course_id = ${courses.id})`,
        ),
      ),
    )
    .where(
      sql`NOT EXISTS (SELECT 1 FROM ${courseProgress} cp WHERE cp.user_id = ${learnerId} AND cp.course_id = ${courses.id})`,
    )
    .as("ranked");
  return db
    .select({
      level: ranked.level,
      courseId: ranked.courseId,
      courseTitle: ranked.courseTitle,
      lessonId: ranked.lessonId,
      lessonTitle: ranked.lessonTitle,
      position: ranked.position,
    })
    .from(ranked)
    .where(lte(ranked.rank, MAX_RECOMMENDATIONS))
    .orderBy(asc(ranked.level), asc(ranked.rank))
    .limit(MAX_RECOMMENDATIONS * CEFR_LEVELS.length);
}

export type InsightsData = Awaited<ReturnType<typeof readInsights>>;
