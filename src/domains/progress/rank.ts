import { type SQL, sql } from "drizzle-orm";
import { learnerStats, weeklyXp, xpRankCounts } from "../../db/schema";
import type { Database } from "../../platform/db";
import type { Writable } from "../../platform/service/commit";

/**
 * Exact leaderboard ranks from a counted "digit tree" of XP (the xp_rank_counts table).
 *
 * Each board (period 'all' or a week's Monday; scope 'platform' or an institution id) counts, per
 * level L = 0…RANK_LEVELS−1, its learners with XP > 0 by bucket = floor(xp / RANK_BASE^L); buckets of
 * 0 are not stored. The learners with more XP than X are, for every level L, those in the buckets
 * of level L above X's bucket that share X's bucket at level L+1 (the top level: every bucket above
 * X's). So a rank reads at most RANK_BASE − 1 rows per level — at most 120 — through one primary-key
 * range per level, whatever the size of the board; and it is exact for any XP (above
 * RANK_BASE^RANK_LEVELS ≈ 4.3 × 10⁹ only the top level's range grows).
 *
 * A learner whose XP changes moves from the buckets of the old XP to those of the new one: one
 * INSERT … ON CONFLICT of relative increments, in the same D1 batch as (and before) the learner_stats
 * and weekly_xp upserts, reading the values they are about to change. Increments commute, so
 * concurrent batches of different learners never lose counts; one learner's batches are serialised
 * by the ProgressRecorder. Reading a rank: `learnersAboveSql` (sql.ts).
 */
export const RANK_BASE = 16;
export const RANK_LEVELS = 8;
export const PLATFORM_SCOPE = "platform";
export const ALL_TIME_PERIOD = "all";

/** `[1, 16, 256, …]`: the bucket width of each level, as a JSON literal for json_each (key = level). */
export const RANK_UNITS = JSON.stringify(
  Array.from({ length: RANK_LEVELS }, (_, level) => RANK_BASE ** level),
);

export interface RankMove {
  userId: string;
  /** The learner's institution as learner_stats and a new weekly_xp row will store it. */
  institutionId: string | null;
  /** The all-time total learner_stats is about to store, or null when the all-time boards do not change. */
  xpTotal: number | null;
  /** XP added to weekly_xp per week (the Monday), as the weekly_xp upsert adds it. */
  weeks: [week: string, xp: number][];
}

/**
 * The statement moving one learner between buckets: old positions (read from learner_stats and
 * weekly_xp as they are before this batch's upserts) count −1, new ones +1, on the platform board
 * and on the institution's; what cancels out (same bucket) is not written.
 */
export function rankMoveStatement(db: Database, move: RankMove): Writable | null {
  const positions: SQL[] = [];
  if (move.xpTotal !== null) {
    positions.push(
      sql`SELECT ${ALL_TIME_PERIOD} AS period, ${learnerStats.institutionId} AS inst, ${learnerStats.xpTotal} AS xp, -1 AS delta FROM ${learnerStats} WHERE ${learnerStats.userId} = ${move.userId}`,
      sql`SELECT ${ALL_TIME_PERIOD} AS period, ${move.institutionId} AS inst, CAST(${move.xpTotal} AS INTEGER) AS xp, 1 AS delta`,
    );
  }
  const weeks = move.weeks.filter(([, xp]) => xp !== 0);
  if (weeks.length > 0) {
    const list = JSON.stringify(weeks);
    // weekly_xp keeps the institution of the row's first insert; its xp is added to.
    positions.push(
      sql`SELECT x.week AS period, x.institution_id AS inst, x.xp AS xp, -1 AS delta FROM json_each(${list}) w JOIN ${weeklyXp} x ON x.week = json_extract(w.value, '$[0]') AND x.user_id = ${move.userId}`,
      sql`SELECT json_extract(w.value, '$[0]') AS period, CASE WHEN x.user_id IS NULL THEN ${move.institutionId} ELSE x.institution_id END AS inst,
            coalesce(x.xp, 0) + json_extract(w.value, '$[1]') AS xp, 1 AS delta
          FROM json_each(${list}) w LEFT JOIN ${weeklyXp} x ON x.week = json_extract(w.value, '$[0]') AND x.user_id = ${move.userId}`,
    );
  }
  if (positions.length === 0) return null;
  const union = sql.join(positions, sql` UNION ALL `);
  // Through the query builder: drizzle's D1 batch cannot run a raw `db.run(sql)` with parameters.
  // Columns in table order: period, scope, level, bucket, learners.
  return db
    .insert(xpRankCounts)
    .select(
      sql`SELECT p.period, CASE s.k WHEN 0 THEN ${PLATFORM_SCOPE} ELSE p.inst END, l.key, p.xp / l.value, sum(p.delta)
        FROM (${union}) p
        JOIN (SELECT 0 AS k UNION ALL SELECT 1) s
        JOIN json_each(${sql.raw(`'${RANK_UNITS}'`)}) l ON p.xp >= l.value
        WHERE s.k = 0 OR p.inst IS NOT NULL
        GROUP BY 1, 2, 3, 4
        HAVING sum(p.delta) <> 0`,
    )
    .onConflictDoUpdate({
      target: [xpRankCounts.period, xpRankCounts.scope, xpRankCounts.level, xpRankCounts.bucket],
      set: { learners: sql`${xpRankCounts.learners} + excluded.learners` },
    }) as unknown as Writable;
}
