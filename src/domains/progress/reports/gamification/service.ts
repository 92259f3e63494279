import { and, asc, eq } from "drizzle-orm";
import { achievements, learnerStats, weeklyXp } from "../../../../db/schema";
import type { ServiceContext } from "../../../../platform/service/context";
import { PLATFORM_SCOPE } from "../../rank";
import type { AchievementInputs } from "../../rules";
import {
  LEADERBOARD_SUBJECT_SQL,
  LEADERBOARD_TOP_SQL,
  type LeaderboardRecord,
  type LeaderboardSubjectRecord,
} from "../../sql";

/** The reads behind the gamification stats and the leaderboards: one D1 round trip each. */

export interface GamificationStats extends AchievementInputs {
  currentStreak: number;
  lastActiveDay: string | null;
}

/**
 * The learner's counters (null before their first attempt), this week's XP and the unlocked
 * achievements (in the order they were unlocked), in one batch.
 */
export async function readGamification(ctx: ServiceContext, input: { learnerId: string; week: string }) {
  const { db } = ctx;
  const { learnerId, week } = input;
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

export function leaderboardRow(r: LeaderboardRecord): LeaderboardRow {
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
 * one batch of two statements (sql.ts), each bounded by the page: the count reads at most 15 rows per
 * level of xp_rank_counts, however many learners are above.
 */
export async function readLeaderboard(
  ctx: ServiceContext,
  input: {
    period: "week" | "all_time";
    institutionId: string | null;
    week: string;
    subjectId: string;
    limit: number;
  },
) {
  const d1 = ctx.d1;
  const { period, institutionId, week, subjectId, limit } = input;
  const scope = institutionId ?? PLATFORM_SCOPE;
  const topSql = LEADERBOARD_TOP_SQL[period][institutionId ? "institution" : "platform"];
  const [top, me] =
    period === "week"
      ? await d1.batch<LeaderboardSubjectRecord>([
          institutionId
            ? d1.prepare(topSql).bind(week, limit, institutionId)
            : d1.prepare(topSql).bind(week, limit),
          d1.prepare(LEADERBOARD_SUBJECT_SQL.week).bind(week, subjectId, scope),
        ])
      : await d1.batch<LeaderboardSubjectRecord>([
          institutionId ? d1.prepare(topSql).bind(limit, institutionId) : d1.prepare(topSql).bind(limit),
          d1.prepare(LEADERBOARD_SUBJECT_SQL.all_time).bind(subjectId, scope),
        ]);
  const mine = me?.results[0];
  return {
    top: (top?.results ?? []).map(leaderboardRow),
    me: mine ? leaderboardRow(mine) : null,
    above: mine?.above ?? 0,
  };
}
