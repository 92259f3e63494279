import type { Env } from "../../env";
import { nowIso } from "../../platform/ids";
import { addDays, weekOf } from "./rules";

/**
 * Weeks a reader can still ask for: the learner's current week (leaderboards, "XP this week") in
 * any time zone, and the one before. Older weeks of weekly_xp and their rank counts are never read.
 */
const WEEKS_KEPT_DAYS = 14;
const ROWS_PER_SWEEP = 5_000;

/**
 * Deletes weekly XP and weekly rank counts of weeks no reader can ask for any more, oldest first and
 * bounded per run. A week's counts go once its weekly_xp rows are gone, in the same batch, so the
 * counts never outlive or undercount rows still stored. An attempt back-dated into such a week
 * (allowed) writes a fresh row and count there, which a later run deletes again.
 */
export async function purgePastWeeks(env: Env, now: number): Promise<number> {
  const oldestKept = weekOf(addDays(nowIso(now).slice(0, 10), -WEEKS_KEPT_DAYS));
  const db = env.DB;
  const [rows, counts] = await db.batch([
    db
      .prepare(
        "DELETE FROM weekly_xp WHERE (week, user_id) IN (SELECT week, user_id FROM weekly_xp WHERE week < ?1 ORDER BY week LIMIT ?2)",
      )
      .bind(oldestKept, ROWS_PER_SWEEP),
    db
      .prepare(
        `DELETE FROM xp_rank_counts WHERE period <> 'all' AND period < ?1
           AND NOT EXISTS (SELECT 1 FROM weekly_xp w WHERE w.week = xp_rank_counts.period)`,
      )
      .bind(oldestKept),
  ]);
  return (rows?.meta.changes ?? 0) + (counts?.meta.changes ?? 0);
}
