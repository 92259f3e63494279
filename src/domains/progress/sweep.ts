import { nowIso } from "../../platform/ids";
import { commit } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { addDays, weekOf } from "./rules";
import { PURGE_PAST_RANK_COUNTS_SQL, PURGE_PAST_WEEKLY_XP_SQL } from "./sql";

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
 * (allowed) writes a fresh row and count there, which a later run deletes again. `ctx.now()` is the
 * cron's scheduled time.
 */
export async function purgePastWeeks(ctx: ServiceContext): Promise<number> {
  const oldestKept = weekOf(addDays(nowIso(ctx.now()).slice(0, 10), -WEEKS_KEPT_DAYS));
  const d1 = ctx.d1;
  const {
    results: [rows, counts],
  } = await commit(ctx, {
    statements: [
      d1.prepare(PURGE_PAST_WEEKLY_XP_SQL).bind(oldestKept, ROWS_PER_SWEEP),
      d1.prepare(PURGE_PAST_RANK_COUNTS_SQL).bind(oldestKept),
    ],
  });
  return (rows?.meta.changes ?? 0) + (counts?.meta.changes ?? 0);
}
