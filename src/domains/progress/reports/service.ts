import { and, asc, count, eq, exists, gte, inArray, lte, sql } from "drizzle-orm";
import { userNumberOf } from "../../../db/numbers";
import {
  courses,
  dailyActivity,
  type LessonStatus,
  learnerStats,
  lessonProgress,
  lessons,
  platformCounters,
  skillEvidence,
} from "../../../db/schema";
import type { Database } from "../../../platform/db";
import { ApiError } from "../../../platform/errors";
import {
  type PageRequest,
  type PageResult,
  pageBounds,
  pageWithTotal,
} from "../../../platform/http/pagination";
import { everyDatabase, type ServiceContext } from "../../../platform/service/context";
import { visibleCourses } from "../../content/policy";
import { addDays } from "../rules";

/**
 * The reads behind the progress reports (lesson progress, history, CEFR, platform statistics here;
 * insights/ and gamification/ hold theirs, built the same way). Each function is one D1 round trip
 * (a batch of selects; lesson progress takes a second only for a course without lessons) over the
 * aggregates the write path maintains; none reads the attempts table, and each statement is bounded
 * by the page, the learner or the catalogue.
 */

// ---------------------------------------------------------------------------------------------
// Lesson progress of one course

export interface LessonProgressRow {
  id: string;
  position: number;
  title: string;
  itemCount: number;
  /** `null` while the learner has not started the lesson. */
  progress: {
    itemsDone: number;
    itemsTotal: number;
    scoreSum: number;
    status: LessonStatus;
    startedAt: string;
    completedAt: string | null;
  } | null;
}

/**
 * A page of the course's lessons, each with the learner's progress (null before they started it),
 * and the course's lesson count, in one round trip; 404 when the course is unknown or invisible.
 * Only a list with no lesson at all takes a second look, to tell an empty course from a missing one.
 */
export async function readLessonProgress(
  ctx: ServiceContext,
  input: { learnerId: string; courseId: string; page: PageRequest; includeDrafts: boolean },
): Promise<PageResult<LessonProgressRow>> {
  const { db } = ctx;
  const { learnerId, courseId, page, includeDrafts } = input;
  const course = and(eq(courses.id, courseId), visibleCourses(includeDrafts));
  const where = and(
    eq(lessons.courseId, courseId),
    includeDrafts ? undefined : exists(db.select({ id: courses.id }).from(courses).where(course)),
  );
  const { limit, offset } = pageBounds(page);
  const pageQuery = db
    .select({
      id: lessons.id,
      position: lessons.position,
      title: lessons.title,
      itemCount: lessons.itemCount,
      progress: {
        status: lessonProgress.status,
        itemsDone: lessonProgress.itemsDone,
        itemsTotal: lessonProgress.itemsTotal,
        scoreSum: lessonProgress.scoreSum,
        startedAt: lessonProgress.startedAt,
        completedAt: lessonProgress.completedAt,
      },
    })
    .from(lessons)
    .leftJoin(
      lessonProgress,
      and(
        eq(lessonProgress.userNumber, userNumberOf(learnerId)),
        eq(lessonProgress.lessonNumber, lessons.number),
      ),
    )
    .where(where)
    .orderBy(asc(lessons.position), asc(lessons.id))
    .limit(limit)
    .offset(offset);
  const result = await pageWithTotal(db, pageQuery, lessons, where);
  if (result.total === 0 && !(await db.select({ id: courses.id }).from(courses).where(course).get()))
    throw new ApiError("not_found", `No course ${courseId}.`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// History

export async function readDailyActivity(
  ctx: ServiceContext,
  input: { learnerId: string; from: string; to: string },
) {
  const { learnerId, from, to } = input;
  // At most 366 rows: one per day of the range (primary key user_id, day).
  return ctx.db
    .select({
      day: dailyActivity.day,
      attempts: dailyActivity.attempts,
      itemsCompleted: dailyActivity.itemsCompleted,
      correct: dailyActivity.correct,
      xp: dailyActivity.xp,
      seconds: dailyActivity.seconds,
    })
    .from(dailyActivity)
    .where(
      and(
        eq(dailyActivity.userNumber, userNumberOf(learnerId)),
        gte(dailyActivity.day, from),
        lte(dailyActivity.day, to),
      ),
    )
    .orderBy(asc(dailyActivity.day));
}

export type DailyActivityRow = Awaited<ReturnType<typeof readDailyActivity>>[number];

// ---------------------------------------------------------------------------------------------
// CEFR

export const evidenceColumns = {
  skill: skillEvidence.skill,
  cefrLevel: skillEvidence.cefrLevel,
  attempts: skillEvidence.attempts,
  correct: skillEvidence.correct,
  scoreSum: skillEvidence.scoreSum,
};

/** At most skills × levels (36) rows. */
export async function readSkillEvidence(ctx: ServiceContext, learnerId: string) {
  return ctx.db.select(evidenceColumns).from(skillEvidence).where(eq(skillEvidence.userId, learnerId));
}

// ---------------------------------------------------------------------------------------------
// Platform statistics

export const COUNTER_NAMES = [
  "attempts",
  "items_completed",
  "lessons_completed",
  "courses_completed",
] as const;

/**
 * Content totals from the published course rows (their lesson and item counts are kept by the
 * catalogue), active learners through learner_stats_active_idx, activity from platform_counters.
 * The catalogue is the same in every database and is read once; learners and counters are each
 * database's own, read in parallel and summed (design/multi-database.md): the sums are exact.
 */
export async function readPlatformStats(ctx: ServiceContext, today: string) {
  const parts = await Promise.all(
    everyDatabase(ctx).map(({ name, db }) => readActivity(db, today, name === ctx.database)),
  );
  const counters = new Map<string, number>();
  for (const part of parts)
    for (const { name, value } of part.counters) counters.set(name, (counters.get(name) ?? 0) + value);
  const sum = (pick: (part: (typeof parts)[number]) => number) =>
    parts.reduce((total, p) => total + pick(p), 0);
  const content = parts.find((part) => part.content)?.content;
  return {
    content: { courses: content?.courses ?? 0, lessons: content?.lessons ?? 0, items: content?.items ?? 0 },
    active: { today: sum((p) => p.today), last7: sum((p) => p.last7), last30: sum((p) => p.last30) },
    counters,
  };
}

/** One database's active learners and activity counters. */
async function readActivity(db: Database, today: string, withContent: boolean) {
  const activeSince = (day: string) =>
    db.select({ n: count() }).from(learnerStats).where(gte(learnerStats.lastActiveDay, day));
  // The catalogue is the same in every database: counted once, in the invocation's own batch.
  const contentTotals = db
    .select({
      courses: count(),
      lessons: sql<number>`coalesce(sum(${courses.lessonCount}), 0)`.mapWith(Number),
      items: sql<number>`coalesce(sum(${courses.itemCount}), 0)`.mapWith(Number),
    })
    .from(courses)
    .where(and(eq(courses.published, true), sql`${withContent ? 1 : 0} = 1`));
  const [content, activeToday, active7, active30, counters] = await db.batch([
    contentTotals,
    activeSince(today),
    activeSince(addDays(today, -6)),
    activeSince(addDays(today, -29)),
    db
      .select({ name: platformCounters.name, value: platformCounters.value })
      .from(platformCounters)
      .where(inArray(platformCounters.name, [...COUNTER_NAMES])),
  ]);
  return {
    content: withContent ? content[0] : undefined,
    today: activeToday[0]?.n ?? 0,
    last7: active7[0]?.n ?? 0,
    last30: active30[0]?.n ?? 0,
    counters,
  };
}
