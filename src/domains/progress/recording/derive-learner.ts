import type { SkillEvidenceRow } from "../rules";
import { addDays, cefrReport, currentStreak, localTime, STREAK_MILESTONES, streaks } from "../rules";
import { ACTIVE_DAYS_READ, type LearnerState } from "./load";
import type { Tally } from "./tally";

/** The learner after the whole batch: the streak, the milestones to announce, the CEFR levels. */
export interface LearnerAfter {
  run: { latestRun: number; latestDay: string | null; longest: number };
  /** The current streak as the learner sees it today (0 once a day was missed). */
  streakNow: number;
  milestonesAnnounced: Record<string, string>;
  cefrLevels: Record<string, string>;
}

/** Derives the streak and CEFR levels from the batch's tally, adding their happenings to it. */
export function deriveLearner(tally: Tally, state: LearnerState, nowMs: number): LearnerAfter {
  const run = streaks(tally.activeDays);
  const today = localTime(nowMs, tally.learner.timeZone).day;
  const streakNow = currentStreak(run.latestRun, run.latestDay, today);
  const milestonesAnnounced = { ...(state.stats?.streakMilestones ?? {}) };
  // Only a batch that records something may announce: its learner_stats row, written in the same
  // batch, then remembers the announcement, so a resend (all duplicates) never repeats it.
  if (tally.attemptRows.length > 0 && streakNow > 0) {
    const horizon = state.recentDays.length === ACTIVE_DAYS_READ ? (state.recentDays.at(-1) ?? null) : null;
    for (const milestone of streakMilestonesDue(run, horizon, milestonesAnnounced)) {
      milestonesAnnounced[milestone.days] = milestone.day;
      tally.happenings.push({ type: "streak.milestone", days: milestone.days, day: milestone.day });
    }
  }
  const cefrLevels = cefrLevelsAfter(tally, state);
  return { run, streakNow, milestonesAnnounced, cefrLevels };
}

/** The CEFR levels over all the learner's evidence; a level that changed is a happening. */
function cefrLevelsAfter(tally: Tally, state: LearnerState): Record<string, string> {
  const report = cefrReport(mergeEvidence(state.evidence, [...tally.evidence.values()]));
  const levels: Record<string, string> = {};
  for (const skill of report.skills) if (skill.level) levels[skill.skill] = skill.level;
  if (report.overall) levels.overall = report.overall;
  const previous = state.stats?.cefrLevels ?? {};
  for (const skill of new Set([...Object.keys(previous), ...Object.keys(levels)])) {
    const from = previous[skill] ?? null;
    const to = levels[skill] ?? null;
    if (from !== to) tally.happenings.push({ type: "cefr.level_changed", skill, from, to });
  }
  return levels;
}

/**
 * The milestones the current run (ending today or yesterday) has reached but not announced, each with
 * the day the run reached it. Announcements are remembered by that day: active days are never removed,
 * so an announced day stays inside whatever run later contains it — a run that back-filled days extend
 * or merge with an earlier one keeps what either part announced. `horizon` is the oldest active day
 * read when there may be older ones: a run reaching back to it may have begun earlier still.
 */
function streakMilestonesDue(
  run: { latestRun: number; latestDay: string | null },
  horizon: string | null,
  announced: Record<string, string>,
): { days: number; day: string }[] {
  if (!run.latestDay) return [];
  const start = addDays(run.latestDay, 1 - run.latestRun);
  const knownStart = horizon !== null && start <= horizon ? "" : start;
  return STREAK_MILESTONES.filter((days) => days <= run.latestRun)
    .filter((days) => announced[days] === undefined || announced[days] < knownStart)
    .map((days) => ({ days, day: addDays(start, days - 1) }));
}

function mergeEvidence(rows: SkillEvidenceRow[], deltas: SkillEvidenceRow[]): SkillEvidenceRow[] {
  const merged = new Map(rows.map((r) => [`${r.skill}:${r.cefrLevel}`, { ...r }]));
  for (const d of deltas) {
    const key = `${d.skill}:${d.cefrLevel}`;
    const row = merged.get(key);
    if (row) {
      row.attempts += d.attempts;
      row.correct += d.correct;
      row.scoreSum += d.scoreSum;
    } else merged.set(key, { ...d });
  }
  return [...merged.values()];
}
