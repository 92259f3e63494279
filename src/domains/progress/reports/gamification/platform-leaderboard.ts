import { everyDatabase, type ServiceContext } from "../../../../platform/service/context";
import { ALL_TIME_PERIOD, PLATFORM_SCOPE } from "../../rank";
import { LEADERBOARD_TOP_SQL, type LeaderboardRecord, learnersAboveSql } from "../../sql";
import { type LeaderboardRow, leaderboardRow, readLeaderboard } from "./service";

/**
 * The platform's leaderboard across every database (design/multi-database.md#platform-wide-reads):
 * each database's platform board counts the learners whose XP was recorded there, so the board of
 * the platform is their sum. The subject's entry and their database's top are read where the subject
 * lives (the invocation's database: `resolveLearner` moved it there); every other database reads its
 * top `limit` and the number of its learners with more XP than the subject, in one batch, in
 * parallel. The tops merge by the board's order (most XP first, ties by user id), and the counts
 * add up: exact, as one database holding every learner would answer. A learner moved with their
 * institution keeps being counted once: the move copies no platform board, and later recordings
 * move them between buckets by increments, which add up across databases as within one.
 */
export async function readPlatformLeaderboard(
  ctx: ServiceContext,
  input: { period: "week" | "all_time"; week: string; subjectId: string; limit: number },
) {
  const { period, week, limit } = input;
  const own = await readLeaderboard(ctx, { ...input, institutionId: null });
  const others = everyDatabase(ctx).filter((db) => db.name !== ctx.database);
  if (!own.me || others.length === 0) return own;
  const xp = own.me.xp;
  const topSql = LEADERBOARD_TOP_SQL[period].platform;
  const spread = await Promise.all(
    others.map(async ({ d1 }) => {
      const [top, above] = await d1.batch<LeaderboardRecord & { above: number }>([
        period === "week" ? d1.prepare(topSql).bind(week, limit) : d1.prepare(topSql).bind(limit),
        period === "week"
          ? d1.prepare(ABOVE_SQL.week).bind(xp, week)
          : d1.prepare(ABOVE_SQL.all_time).bind(xp),
      ]);
      return { top: (top?.results ?? []).map(leaderboardRow), above: above?.results[0]?.above ?? 0 };
    }),
  );
  return {
    top: mergeTops([own.top, ...spread.map((db) => db.top)], limit),
    me: own.me,
    above: spread.reduce((sum, db) => sum + db.above, own.above),
  };
}

/** The learners of a database's platform board with more XP than `?1` (week: `?2` the Monday). */
const ABOVE_SQL = {
  week: `SELECT ${learnersAboveSql("CAST(?1 AS INTEGER)", "?2", `'${PLATFORM_SCOPE}'`)} AS above`,
  all_time: `SELECT ${learnersAboveSql("CAST(?1 AS INTEGER)", `'${ALL_TIME_PERIOD}'`, `'${PLATFORM_SCOPE}'`)} AS above`,
};

/**
 * The first `limit` of the databases' tops by most XP, then user id (compared by code point, as the
 * statements' `ORDER BY` does). A learner read in two databases (an institution being copied by a
 * move) is listed once.
 */
export function mergeTops(tops: readonly LeaderboardRow[][], limit: number): LeaderboardRow[] {
  const seen = new Set<string>();
  return tops
    .flat()
    .sort((a, b) => b.xp - a.xp || (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0))
    .filter((row) => !seen.has(row.userId) && seen.add(row.userId))
    .slice(0, limit);
}
