import type { learnerStats, users, weeklyXp } from "../../db/schema";
import { ALL_TIME_PERIOD, RANK_BASE, RANK_LEVELS, RANK_UNITS } from "./rank";

/**
 * The progress domain's raw SQL: the leaderboard reads (rows used as D1 returns them, and a rank
 * count drizzle cannot express as one statement) and the sweep of past weeks. The recording path and
 * the other reports are drizzle query builders.
 */

type UserRow = typeof users.$inferSelect;

const TOP_LEVEL = RANK_LEVELS - 1;
const MAX_INTEGER = "9223372036854775807";

/**
 * A scalar subquery counting the learners of a board with more XP than `xp`, an SQL expression of the
 * enclosing statement; `period` and `scope` are SQL expressions too (e.g. `?1`). One primary-key
 * range of xp_rank_counts per level, at most RANK_BASE − 1 rows each (rank.ts explains the counts).
 */
export function learnersAboveSql(xp: string, period: string, scope: string): string {
  // CROSS JOIN keeps the levels as the outer loop (SQLite does not reorder it): one range per level.
  return `(SELECT coalesce(sum(c.learners), 0) FROM json_each('${RANK_UNITS}') l
    CROSS JOIN xp_rank_counts c
    WHERE c.period = ${period} AND c.scope = ${scope} AND c.level = l.key
      AND c.bucket > ${xp} / l.value
      AND c.bucket < CASE WHEN l.key = ${TOP_LEVEL} THEN ${MAX_INTEGER} ELSE (${xp} / (l.value * ${RANK_BASE}) + 1) * ${RANK_BASE} END)`;
}

const ENTRY_COLUMNS =
  "u.id AS user_id, u.name AS name, u.institution_id AS institution_id, u.leaderboard_opt_out AS opt_out";

/** A leaderboard entry as the statements below return it. */
export interface LeaderboardRecord {
  user_id: UserRow["id"];
  name: UserRow["name"];
  institution_id: UserRow["institutionId"];
  /** `leaderboard_opt_out` as SQLite stores the boolean: 0 or 1. */
  opt_out: number;
  /** The board's XP: `weekly_xp.xp` of the week or `learner_stats.xp_total`, 0 for none. */
  xp: (typeof weeklyXp.$inferSelect)["xp"] & (typeof learnerStats.$inferSelect)["xpTotal"];
}
/** The subject's entry, with the number of learners of the board above them. */
export interface LeaderboardSubjectRecord extends LeaderboardRecord {
  above: number;
}

function weekTopSql(institution: boolean): string {
  return `SELECT ${ENTRY_COLUMNS}, w.xp AS xp FROM weekly_xp w JOIN users u ON u.id = w.user_id
       WHERE ${institution ? "w.institution_id = ?3 AND " : ""}w.week = ?1 AND w.xp > 0 ORDER BY w.xp DESC, w.user_id LIMIT ?2`;
}
function allTimeTopSql(institution: boolean): string {
  return `SELECT ${ENTRY_COLUMNS}, s.xp_total AS xp FROM learner_stats s JOIN users u ON u.id = s.user_id
       WHERE ${institution ? "s.institution_id = ?2 AND " : ""}s.xp_total > 0 ORDER BY s.xp_total DESC, s.user_id LIMIT ?1`;
}

/**
 * The top of a board in XP order (ties by user id), stopping at the limit, through an index
 * (weekly_xp_rank_idx / weekly_xp_institution_rank_idx for a week, learner_stats_xp_idx /
 * learner_stats_institution_xp_idx for all time); learners with no XP are not on it.
 * `week`: binds ?1 the week (its Monday), ?2 limit[, ?3 institution].
 * `all_time`: binds ?1 limit[, ?2 institution]. Rows: `LeaderboardRecord`.
 */
export const LEADERBOARD_TOP_SQL = {
  week: { platform: weekTopSql(false), institution: weekTopSql(true) },
  all_time: { platform: allTimeTopSql(false), institution: allTimeTopSql(true) },
};

/**
 * The subject's entry on a board, with their XP (0 without any) and the number of learners of the
 * board above them, read from the rank counts. `week`: binds ?1 week, ?2 subject, ?3 scope (an
 * institution id or 'platform'). `all_time`: binds ?1 subject, ?2 scope. One row
 * (`LeaderboardSubjectRecord`), none for an unknown user.
 */
export const LEADERBOARD_SUBJECT_SQL = {
  week: `SELECT ${ENTRY_COLUMNS}, coalesce(w.xp, 0) AS xp, ${learnersAboveSql("coalesce(w.xp, 0)", "?1", "?3")} AS above
       FROM users u LEFT JOIN weekly_xp w ON w.week = ?1 AND w.user_id = u.id WHERE u.id = ?2`,
  all_time: `SELECT ${ENTRY_COLUMNS}, coalesce(s.xp_total, 0) AS xp, ${learnersAboveSql("coalesce(s.xp_total, 0)", `'${ALL_TIME_PERIOD}'`, "?2")} AS above
       FROM users u LEFT JOIN learner_stats s ON s.user_id = u.id WHERE u.id = ?1`,
};

/** Deletes up to ?2 weekly_xp rows of weeks before ?1 (a Monday), oldest week first. */
export const PURGE_PAST_WEEKLY_XP_SQL =
  "DELETE FROM weekly_xp WHERE (week, user_id) IN (SELECT week, user_id FROM weekly_xp WHERE week < ?1 ORDER BY week LIMIT ?2)";

/**
 * Deletes the weekly rank counts (never the all-time ones) of weeks before ?1 that have no weekly_xp
 * row left, so a week's counts never outlive or undercount its rows.
 */
export const PURGE_PAST_RANK_COUNTS_SQL = `DELETE FROM xp_rank_counts WHERE period <> '${ALL_TIME_PERIOD}' AND period < ?1
  AND NOT EXISTS (SELECT 1 FROM weekly_xp w WHERE w.week = xp_rank_counts.period)`;
