import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { CEFR_LEVELS, SKILLS } from "./content";

export const LESSON_STATUSES = ["not_started", "in_progress", "completed"] as const;
export type LessonStatus = (typeof LESSON_STATUSES)[number];

/**
 * Every recorded training-item attempt. The id is the client's UUID: a resent attempt hits the
 * primary key and changes nothing. The aggregates below are maintained in the same D1 batch as the
 * insert, so reads never scan this table.
 *
 * The table is `WITHOUT ROWID` (hand-written in its migration, `…_attempts_without_rowid`; drizzle
 * does not model it): the row is stored in the primary key's b-tree, so the id needs no index of its
 * own. Its only index is the institution's time order, which the activity export, the xAPI back-fill
 * and the cold tier read. A migration that rebuilds this table must keep `WITHOUT ROWID`
 * (docs/design/capacity.md, "Narrower attempt rows").
 */
export const attempts = sqliteTable(
  "attempts",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    institutionId: text("institution_id"),
    trainingItemId: text("training_item_id").notNull(),
    lessonId: text("lesson_id").notNull(),
    courseId: text("course_id").notNull(),
    skill: text("skill", { enum: SKILLS }).notNull(),
    cefrLevel: text("cefr_level", { enum: CEFR_LEVELS }).notNull(),
    score: real("score").notNull(),
    correct: integer("correct", { mode: "boolean" }).notNull(),
    durationSeconds: integer("duration_seconds").notNull(),
    occurredAt: text("occurred_at").notNull(),
    /** The learner's calendar day of `occurred_at`, in the learner's time zone. */
    localDay: text("local_day").notNull(),
    xpAwarded: integer("xp_awarded").notNull(),
    recordedAt: text("recorded_at").notNull(),
  },
  (t) => [index("attempts_institution_time_idx").on(t.institutionId, t.occurredAt, t.id)],
);

/**
 * Best result per learner and item; an item is done once an attempt passes. Only the recording reads
 * it, one seek per item of a batch on the key.
 *
 * A row per learner and item met, kept for good: the table is narrow on purpose. It is `WITHOUT
 * ROWID` (hand-written in its migrations, `…_progress_rollups_without_rowid`, `…_progress_on_numbers`;
 * drizzle does not model it), so the key needs no index of its own. The learner and the item are their
 * numbers (`users.number`, `training_items.number`), not their ids; the item's lesson is not stored
 * (`training_items` has it); the time is Unix seconds. No count of attempts nor latest attempt time:
 * nothing read them. A migration that rebuilds this table must keep `WITHOUT ROWID`
 * (docs/design/capacity.md).
 */
export const itemProgress = sqliteTable(
  "item_progress",
  {
    userNumber: integer("user_number").notNull(),
    itemNumber: integer("item_number").notNull(),
    bestScore: real("best_score").notNull(),
    /** Unix seconds of the first passing attempt; null until then. */
    completedAt: integer("completed_at"),
  },
  (t) => [primaryKey({ columns: [t.userNumber, t.itemNumber] })],
);

/**
 * A learner's progress in a lesson they started: a row per learner and lesson met, kept for good. The
 * learner, the lesson and its course are their numbers (`users.number`, `lessons.number`,
 * `courses.number`), not their ids (docs/design/capacity.md, "Integer keys"); readers find the numbers
 * in the statement and answer with ids. `WITHOUT ROWID` (hand-written in `…_lesson_progress_by_numbers`;
 * drizzle does not model it): the row sits in its key's b-tree; the course index is a learner's
 * lessons of one course (the exports, a course's score). A rebuild must keep it.
 */
export const lessonProgress = sqliteTable(
  "lesson_progress",
  {
    userNumber: integer("user_number").notNull(),
    lessonNumber: integer("lesson_number").notNull(),
    courseNumber: integer("course_number").notNull(),
    itemsDone: integer("items_done").notNull(),
    itemsTotal: integer("items_total").notNull(),
    /** Sum of the best scores of the done items; score = sum / done. */
    scoreSum: real("score_sum").notNull(),
    status: text("status", { enum: LESSON_STATUSES }).notNull(),
    startedAt: text("started_at").notNull(),
    completedAt: text("completed_at"),
    lastActivityAt: text("last_activity_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userNumber, t.lessonNumber] }),
    index("lesson_progress_course_idx").on(t.userNumber, t.courseNumber),
  ],
);

export const courseProgress = sqliteTable(
  "course_progress",
  {
    userId: text("user_id").notNull(),
    courseId: text("course_id").notNull(),
    institutionId: text("institution_id"),
    lessonsCompleted: integer("lessons_completed").notNull(),
    lessonsTotal: integer("lessons_total").notNull(),
    itemsDone: integer("items_done").notNull(),
    xp: integer("xp").notNull(),
    startedAt: text("started_at").notNull(),
    completedAt: text("completed_at"),
    lastActivityAt: text("last_activity_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.courseId] }),
    index("course_progress_institution_idx").on(t.institutionId, t.userId, t.courseId),
  ],
);

/**
 * One row per learner and local day with any activity: history, streaks, active-learner counts.
 * `WITHOUT ROWID` (hand-written in `…_progress_rollups_without_rowid`, `…_progress_on_numbers`): every
 * reader seeks the learner's days on the key, which is the table itself, by the learner's number
 * (`users.number`). A rebuild must keep it.
 */
export const dailyActivity = sqliteTable(
  "daily_activity",
  {
    userNumber: integer("user_number").notNull(),
    day: text("day").notNull(),
    attempts: integer("attempts").notNull(),
    itemsCompleted: integer("items_completed").notNull(),
    correct: integer("correct").notNull(),
    xp: integer("xp").notNull(),
    seconds: integer("seconds").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userNumber, t.day] })],
);

/** Study time by local weekday (0 = Monday) and hour, for insights. */
export const studyTime = sqliteTable(
  "study_time",
  {
    userId: text("user_id").notNull(),
    weekday: integer("weekday").notNull(),
    hour: integer("hour").notNull(),
    seconds: integer("seconds").notNull(),
    attempts: integer("attempts").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.weekday, t.hour] })],
);

/** CEFR evidence: attempts per learner, skill and item level. */
export const skillEvidence = sqliteTable(
  "skill_evidence",
  {
    userId: text("user_id").notNull(),
    skill: text("skill", { enum: SKILLS }).notNull(),
    cefrLevel: text("cefr_level", { enum: CEFR_LEVELS }).notNull(),
    attempts: integer("attempts").notNull(),
    correct: integer("correct").notNull(),
    scoreSum: real("score_sum").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.skill, t.cefrLevel] })],
);

export const learnerStats = sqliteTable(
  "learner_stats",
  {
    userId: text("user_id").primaryKey(),
    institutionId: text("institution_id"),
    xpTotal: integer("xp_total").notNull(),
    attempts: integer("attempts").notNull(),
    correct: integer("correct").notNull(),
    seconds: integer("seconds").notNull(),
    itemsCompleted: integer("items_completed").notNull(),
    lessonsCompleted: integer("lessons_completed").notNull(),
    coursesCompleted: integer("courses_completed").notNull(),
    perfectLessons: integer("perfect_lessons").notNull(),
    currentStreak: integer("current_streak").notNull(),
    longestStreak: integer("longest_streak").notNull(),
    lastActiveDay: text("last_active_day"),
    /** JSON map skill → CEFR level, as last reported, to detect level changes. */
    cefrLevels: text("cefr_levels", { mode: "json" }).$type<Record<string, string>>().notNull(),
    /**
     * JSON map streak milestone (days) → the day the learner's streak last reached it, as announced by a
     * `streak.milestone` event. A milestone whose day lies within the current run was announced for it.
     */
    streakMilestones: text("streak_milestones", { mode: "json" })
      .$type<Record<string, string>>()
      .notNull()
      .default({}),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("learner_stats_xp_idx").on(t.xpTotal, t.userId),
    index("learner_stats_active_idx").on(t.lastActiveDay),
    /** The institution's all-time leaderboard and a member's rank in it, without reading other institutions. */
    index("learner_stats_institution_xp_idx").on(t.institutionId, t.xpTotal, t.userId),
  ],
);

/** XP per learner per week (Monday of the learner's local week), for the weekly leaderboards. */
export const weeklyXp = sqliteTable(
  "weekly_xp",
  {
    week: text("week").notNull(),
    userId: text("user_id").notNull(),
    /** The learner's institution, so that an institution's board is an index range, not a walk over its members. */
    institutionId: text("institution_id"),
    xp: integer("xp").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.week, t.userId] }),
    index("weekly_xp_rank_idx").on(t.week, t.xp, t.userId),
    index("weekly_xp_institution_rank_idx").on(t.institutionId, t.week, t.xp, t.userId),
  ],
);

/**
 * Counted "digit tree" of XP per leaderboard, so that a learner's exact rank is read from a bounded
 * number of rows whatever the size of the board. A board is a `period` ('all', or the Monday of a
 * week as in weekly_xp) and a `scope` ('platform', or an institution id). For each level L of
 * RANK_LEVELS, `learners` counts the board's learners with XP > 0 and floor(xp / RANK_BASE^L) =
 * `bucket`; buckets of 0 are never stored (a rank never needs them). Maintained by relative
 * increments in the same D1 batch as learner_stats and weekly_xp (src/domains/progress/rank.ts).
 */
export const xpRankCounts = sqliteTable(
  "xp_rank_counts",
  {
    period: text("period").notNull(),
    scope: text("scope").notNull(),
    level: integer("level").notNull(),
    bucket: integer("bucket").notNull(),
    learners: integer("learners").notNull(),
  },
  (t) => [primaryKey({ columns: [t.period, t.scope, t.level, t.bucket] })],
);

export const achievements = sqliteTable(
  "achievements",
  {
    userId: text("user_id").notNull(),
    code: text("code").notNull(),
    unlockedAt: text("unlocked_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.code] })],
);

/** Platform-wide counters kept in the same batch as the writes they count. */
export const platformCounters = sqliteTable("platform_counters", {
  name: text("name").primaryKey(),
  value: integer("value").notNull(),
});
