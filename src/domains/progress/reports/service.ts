import { and, asc, count, desc, eq, exists, gte, inArray, isNull, lte, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import {
  achievements,
  CEFR_LEVELS,
  type CefrLevel,
  courseProgress,
  courses,
  dailyActivity,
  type LessonStatus,
  learnerStats,
  lessonProgress,
  lessons,
  platformCounters,
  skillEvidence,
  studyTime,
  weeklyXp,
} from "../../../db/schema";
import type { Env } from "../../../env";
import { database } from "../../../platform/db";
import { ApiError } from "../../../platform/errors";
import {
  type PageRequest,
  type PageResult,
  pageBounds,
  pageWithTotal,
} from "../../../platform/http/pagination";
import { visibleCourses } from "../../content/service";
import { ALL_TIME_PERIOD, learnersAboveSql, PLATFORM_SCOPE } from "../rank";
import { type AchievementInputs, addDays } from "../rules";
import { MAX_RECOMMENDATIONS } from "./schemas";

/**
 * The reads behind the progress, insights, gamification and statistics endpoints. Each function is
 * one D1 round trip (a batch of selects; lesson progress takes a second only for a course without
 * lessons) over the aggregates the write path maintains; none reads
 * the attempts table, and each statement is bounded by the page, the learner or the catalogue.
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
  env: Env,
  learnerId: string,
  courseId: string,
  page: PageRequest,
  includeDrafts: boolean,
): Promise<PageResult<LessonProgressRow>> {
  const db = database(env.DB);
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
      and(eq(lessonProgress.userId, learnerId), eq(lessonProgress.lessonId, lessons.id)),
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

export async function readDailyActivity(env: Env, learnerId: string, from: string, to: string) {
  const db = database(env.DB);
  // At most 366 rows: one per day of the range (primary key user_id, day).
  return db
    .select({
      day: dailyActivity.day,
      attempts: dailyActivity.attempts,
      itemsCompleted: dailyActivity.itemsCompleted,
      correct: dailyActivity.correct,
      xp: dailyActivity.xp,
      seconds: dailyActivity.seconds,
    })
    .from(dailyActivity)
    .where(and(eq(dailyActivity.userId, learnerId), gte(dailyActivity.day, from), lte(dailyActivity.day, to)))
    .orderBy(asc(dailyActivity.day));
}

export type DailyActivityRow = Awaited<ReturnType<typeof readDailyActivity>>[number];

// ---------------------------------------------------------------------------------------------
// CEFR

const evidenceColumns = {
  skill: skillEvidence.skill,
  cefrLevel: skillEvidence.cefrLevel,
  attempts: skillEvidence.attempts,
  correct: skillEvidence.correct,
  scoreSum: skillEvidence.scoreSum,
};

/** At most skills × levels (36) rows. */
export async function readSkillEvidence(env: Env, learnerId: string) {
  const db = database(env.DB);
  return db.select(evidenceColumns).from(skillEvidence).where(eq(skillEvidence.userId, learnerId));
}

// ---------------------------------------------------------------------------------------------
// Insights

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
export async function readInsights(env: Env, learnerId: string, trendFrom: string, today: string) {
  const db = database(env.DB);
  const next = alias(lessons, "next_lesson");
  const previous = alias(lessons, "previous_lesson");

  // The first lesson (by position) of the course that the learner has not completed.
  const firstOpenPosition = sql`(
    SELECT min(l2.position) FROM ${lessons} l2
    LEFT JOIN ${lessonProgress} lp2 ON lp2.user_id = ${learnerId} AND lp2.lesson_id = l2.id
    WHERE l2.course_id = ${courseProgress.courseId} AND (lp2.status IS NULL OR lp2.status <> 'completed'))`;
  const previousPosition = sql`(SELECT max(l3.position) FROM ${lessons} l3 WHERE l3.course_id = ${next.courseId} AND l3.position < ${next.position})`;

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
  const starting = db
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

  // Every selected column gets a distinct name: D1 returns rows as objects, so two columns both
  // called `id` (a course's and a lesson's) would collapse into one in a batch.
  const [evidence, days, grid, continuing, startingRows] = await db.batch([
    db.select(evidenceColumns).from(skillEvidence).where(eq(skillEvidence.userId, learnerId)),
    db
      .select({ day: dailyActivity.day, attempts: dailyActivity.attempts, correct: dailyActivity.correct })
      .from(dailyActivity)
      .where(
        and(
          eq(dailyActivity.userId, learnerId),
          gte(dailyActivity.day, trendFrom),
          lte(dailyActivity.day, today),
        ),
      ),
    // At most 7 × 24 rows.
    db
      .select({ weekday: studyTime.weekday, hour: studyTime.hour, seconds: studyTime.seconds })
      .from(studyTime)
      .where(eq(studyTime.userId, learnerId)),
    db
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
      .limit(MAX_RECOMMENDATIONS),
    starting,
  ]);
  return { evidence, days, grid, continuing, starting: startingRows satisfies StartingRow[] };
}

export type InsightsData = Awaited<ReturnType<typeof readInsights>>;

// ---------------------------------------------------------------------------------------------
// Gamification

export interface GamificationStats extends AchievementInputs {
  currentStreak: number;
  lastActiveDay: string | null;
}

/**
 * The learner's counters (null before their first attempt), this week's XP and the unlocked
 * achievements (in the order they were unlocked), in one batch.
 */
export async function readGamification(env: Env, learnerId: string, week: string) {
  const db = database(env.DB);
  const [stats, weekXp, unlocked] = await db.batch([
    db
      .select({
        xpTotal: learnerStats.xpTotal,
        itemsCompleted: learnerStats.itemsCompleted,
        lessonsCompleted: learnerStats.lessonsCompleted,
        coursesCompleted: learnerStats.coursesCompleted,
        perfectLessons: learnerStats.perfectLessons,
        currentStreak: learnerStats.currentStreak,
        longestStreak: learnerStats.longestStreak,
        lastActiveDay: learnerStats.lastActiveDay,
      })
      .from(learnerStats)
      .where(eq(learnerStats.userId, learnerId)),
    db
      .select({ xp: weeklyXp.xp })
      .from(weeklyXp)
      .where(and(eq(weeklyXp.week, week), eq(weeklyXp.userId, learnerId))),
    db
      .select({ code: achievements.code, unlockedAt: achievements.unlockedAt })
      .from(achievements)
      .where(eq(achievements.userId, learnerId))
      .orderBy(asc(achievements.unlockedAt), asc(achievements.code)),
  ]);
  const gamification: GamificationStats | null = stats[0] ?? null;
  return { stats: gamification, weekXp: weekXp[0]?.xp ?? 0, unlocked };
}

export interface LeaderboardRow {
  userId: string;
  name: string;
  institutionId: string | null;
  optOut: boolean;
  xp: number;
}

interface LeaderboardRecord {
  user_id: string;
  name: string;
  institution_id: string | null;
  opt_out: number;
  xp: number;
}

const ENTRY_COLUMNS =
  "u.id AS user_id, u.name AS name, u.institution_id AS institution_id, u.leaderboard_opt_out AS opt_out";

/**
 * The statements of each board, built once: the top in XP order through an index (weekly_xp_rank_idx
 * or weekly_xp_institution_rank_idx for a week, learner_stats_xp_idx or
 * learner_stats_institution_xp_idx for all time), stopping at the limit; and the subject's row with
 * their XP and the number of learners above it, read from the rank counts (rank.ts). Plain SQL:
 * two statements whose rows are used as D1 returns them.
 */
const LEADERBOARD_SQL = {
  week: {
    // ?1 week, ?2 limit[, ?3 institution]
    top: (institution: boolean) =>
      `SELECT ${ENTRY_COLUMNS}, w.xp AS xp FROM weekly_xp w JOIN users u ON u.id = w.user_id
       WHERE ${institution ? "w.institution_id = ?3 AND " : ""}w.week = ?1 AND w.xp > 0 ORDER BY w.xp DESC, w.user_id LIMIT ?2`,
    // ?1 week, ?2 subject, ?3 scope
    me: `SELECT ${ENTRY_COLUMNS}, coalesce(w.xp, 0) AS xp, ${learnersAboveSql("coalesce(w.xp, 0)", "?1", "?3")} AS above
       FROM users u LEFT JOIN weekly_xp w ON w.week = ?1 AND w.user_id = u.id WHERE u.id = ?2`,
  },
  all_time: {
    // ?1 limit[, ?2 institution]
    top: (institution: boolean) =>
      `SELECT ${ENTRY_COLUMNS}, s.xp_total AS xp FROM learner_stats s JOIN users u ON u.id = s.user_id
       WHERE ${institution ? "s.institution_id = ?2 AND " : ""}s.xp_total > 0 ORDER BY s.xp_total DESC, s.user_id LIMIT ?1`,
    // ?1 subject, ?2 scope
    me: `SELECT ${ENTRY_COLUMNS}, coalesce(s.xp_total, 0) AS xp, ${learnersAboveSql("coalesce(s.xp_total, 0)", `'${ALL_TIME_PERIOD}'`, "?2")} AS above
       FROM users u LEFT JOIN learner_stats s ON s.user_id = u.id WHERE u.id = ?1`,
  },
};
const TOP_SQL = {
  week: { institution: LEADERBOARD_SQL.week.top(true), platform: LEADERBOARD_SQL.week.top(false) },
  all_time: {
    institution: LEADERBOARD_SQL.all_time.top(true),
    platform: LEADERBOARD_SQL.all_time.top(false),
  },
};

function leaderboardRow(r: LeaderboardRecord): LeaderboardRow {
  return {
    userId: r.user_id,
    name: r.name,
    institutionId: r.institution_id,
    optOut: r.opt_out === 1,
    xp: r.xp,
  };
}

/**
 * The top `limit` of a leaderboard, the subject's own entry and the number of learners above it, in
 * one batch of two statements, each bounded by the page: the count reads at most 15 rows per level of
 * xp_rank_counts, however many learners are above.
 */
export async function readLeaderboard(
  env: Env,
  input: {
    period: "week" | "all_time";
    institutionId: string | null;
    week: string;
    subjectId: string;
    limit: number;
  },
) {
  const d1 = env.DB;
  const { period, institutionId, week, subjectId, limit } = input;
  const scope = institutionId ?? PLATFORM_SCOPE;
  const topSql = TOP_SQL[period][institutionId ? "institution" : "platform"];
  const [top, me] =
    period === "week"
      ? await d1.batch<LeaderboardRecord & { above?: number }>([
          institutionId
            ? d1.prepare(topSql).bind(week, limit, institutionId)
            : d1.prepare(topSql).bind(week, limit),
          d1.prepare(LEADERBOARD_SQL.week.me).bind(week, subjectId, scope),
        ])
      : await d1.batch<LeaderboardRecord & { above?: number }>([
          institutionId ? d1.prepare(topSql).bind(limit, institutionId) : d1.prepare(topSql).bind(limit),
          d1.prepare(LEADERBOARD_SQL.all_time.me).bind(subjectId, scope),
        ]);
  const mine = me?.results[0];
  return {
    top: (top?.results ?? []).map(leaderboardRow),
    me: mine ? leaderboardRow(mine) : null,
    above: mine?.above ?? 0,
  };
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
 */
export async function readPlatformStats(env: Env, today: string) {
  const db = database(env.DB);
  const activeSince = (day: string) =>
    db.select({ n: count() }).from(learnerStats).where(gte(learnerStats.lastActiveDay, day));
  const [content, activeToday, active7, active30, counters] = await db.batch([
    db
      .select({
        courses: count(),
        lessons: sql<number>`coalesce(sum(${courses.lessonCount}), 0)`.mapWith(Number),
        items: sql<number>`coalesce(sum(${courses.itemCount}), 0)`.mapWith(Number),
      })
      .from(courses)
      .where(eq(courses.published, true)),
    activeSince(today),
    activeSince(addDays(today, -6)),
    activeSince(addDays(today, -29)),
    db
      .select({ name: platformCounters.name, value: platformCounters.value })
      .from(platformCounters)
      .where(inArray(platformCounters.name, [...COUNTER_NAMES])),
  ]);
  return {
    content: {
      courses: content[0]?.courses ?? 0,
      lessons: content[0]?.lessons ?? 0,
      items: content[0]?.items ?? 0,
    },
    active: { today: activeToday[0]?.n ?? 0, last7: active7[0]?.n ?? 0, last30: active30[0]?.n ?? 0 },
    counters: new Map(counters.map((c) => [c.name, c.value])),
  };
}
