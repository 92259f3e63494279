import { and, asc, eq } from "drizzle-orm";
import { achievements, learnerStats, weeklyXp } from "../../../../db/schema";
import type { Env } from "../../../../env";
import { database } from "../../../../platform/db";
import { ALL_TIME_PERIOD, learnersAboveSql, PLATFORM_SCOPE } from "../../rank";
import type { AchievementInputs } from "../../rules";

/** The reads behind the gamification stats and the leaderboards: one D1 round trip each. */

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
