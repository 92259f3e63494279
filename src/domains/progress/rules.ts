import { CEFR_LEVELS, type CefrLevel, SKILLS, type Skill } from "../../db/schema";
import { addDays, dayMs } from "../../platform/dates";

/** Pure learning rules: no I/O, shared by the write path, the reads and the demo-data generator. */

/** An attempt passes when the learner got it right or scored at least this. */
export const PASS_SCORE = 0.6;
/** XP for passing an item again after its first pass. */
export const PRACTICE_XP = 1;

export function passes(attempt: { score: number; correct: boolean }): boolean {
  return attempt.correct || attempt.score >= PASS_SCORE;
}

/** Full item XP for the first pass, a little for practice, nothing for a miss. */
export function xpFor(
  attempt: { score: number; correct: boolean },
  itemXp: number,
  alreadyCompleted: boolean,
): number {
  if (!passes(attempt)) return 0;
  return alreadyCompleted ? PRACTICE_XP : itemXp;
}

const dayFormatters = new Map<string, Intl.DateTimeFormat>();

/** The learner's local calendar day (YYYY-MM-DD), weekday (0 = Monday) and hour of an instant. */
export function localTime(
  instant: string | number,
  timeZone: string,
): { day: string; weekday: number; hour: number } {
  let fmt = dayFormatters.get(timeZone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      hourCycle: "h23",
      weekday: "short",
    });
    dayFormatters.set(timeZone, fmt);
  }
  const parts = Object.fromEntries(fmt.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
  const weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(parts.weekday ?? "");
  return { day: `${parts.year}-${parts.month}-${parts.day}`, weekday, hour: Number(parts.hour) };
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-GB", { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** Calendar-day arithmetic is the platform's (`src/platform/dates.ts`): days as numbers, never a six-digit year. */
export { addDays };

/** Monday of the ISO week of a calendar day. */
export function weekOf(day: string): string {
  const weekday = (new Date(dayMs(day)).getUTCDay() + 6) % 7;
  return addDays(day, -weekday);
}

/**
 * Streaks over a set of active days: the run that ends on the latest active day, and the longest
 * run. A current streak stays alive through "yesterday" (the learner has not studied yet today).
 */
export function streaks(activeDays: Iterable<string>): {
  latestRun: number;
  latestDay: string | null;
  longest: number;
} {
  const days = [...new Set(activeDays)].sort();
  let longest = 0;
  let run = 0;
  let previous: string | null = null;
  for (const day of days) {
    run = previous !== null && addDays(previous, 1) === day ? run + 1 : 1;
    longest = Math.max(longest, run);
    previous = day;
  }
  return { latestRun: run, latestDay: previous, longest };
}

export function currentStreak(latestRun: number, latestDay: string | null, today: string): number {
  if (!latestDay) return 0;
  return latestDay === today || latestDay === addDays(today, -1) ? latestRun : 0;
}

export const STREAK_MILESTONES = [3, 7, 14, 30, 60, 100, 365] as const;

// --- CEFR -------------------------------------------------------------------------------------

/** A level counts as reached for a skill with this much evidence at that level and this accuracy. */
export const CEFR_EVIDENCE_NEEDED = 10;
export const CEFR_ACCURACY_NEEDED = 0.7;

export interface SkillEvidenceRow {
  skill: Skill;
  cefrLevel: CefrLevel;
  attempts: number;
  correct: number;
  scoreSum: number;
}

export interface SkillLevel {
  skill: Skill;
  /** Highest level reached without a gap from A1; null before A1 is reached. */
  level: CefrLevel | null;
  next: CefrLevel | null;
  /** 0–1 towards `next`: evidence and accuracy at that level, both needed. */
  progressToNext: number;
  evidence: { level: CefrLevel; attempts: number; correct: number; accuracy: number }[];
}

export function skillLevel(skill: Skill, rows: SkillEvidenceRow[]): SkillLevel {
  const byLevel = new Map(rows.filter((r) => r.skill === skill).map((r) => [r.cefrLevel, r]));
  let level: CefrLevel | null = null;
  for (const candidate of CEFR_LEVELS) {
    const row = byLevel.get(candidate);
    // Scores are summed as floats: 12 × 0.7 must still count as 70%.
    if (
      !row ||
      row.attempts < CEFR_EVIDENCE_NEEDED ||
      row.scoreSum / row.attempts + 1e-9 < CEFR_ACCURACY_NEEDED
    )
      break;
    level = candidate;
  }
  const next = level === null ? CEFR_LEVELS[0] : (CEFR_LEVELS[CEFR_LEVELS.indexOf(level) + 1] ?? null);
  let progressToNext = 1;
  if (next) {
    const row = byLevel.get(next);
    const volume = Math.min(1, (row?.attempts ?? 0) / CEFR_EVIDENCE_NEEDED);
    const accuracy =
      row && row.attempts > 0 ? Math.min(1, row.scoreSum / row.attempts / CEFR_ACCURACY_NEEDED) : 0;
    progressToNext = Math.round(Math.min(volume, accuracy) * 100) / 100;
  }
  const evidence = CEFR_LEVELS.flatMap((l) => {
    const row = byLevel.get(l);
    if (!row) return [];
    return [
      {
        level: l,
        attempts: row.attempts,
        correct: row.correct,
        accuracy: Math.round((row.scoreSum / row.attempts) * 1000) / 1000,
      },
    ];
  });
  return { skill, level, next, progressToNext, evidence };
}

/** Overall level: the median of the levels of the skills with any evidence (lower median). */
export function overallLevel(levels: SkillLevel[]): CefrLevel | null {
  const ranked = levels
    .filter((l) => l.evidence.length > 0)
    .map((l) => (l.level === null ? -1 : CEFR_LEVELS.indexOf(l.level)))
    .sort((a, b) => a - b);
  const median = ranked[Math.floor((ranked.length - 1) / 2)];
  return median === undefined || median < 0 ? null : (CEFR_LEVELS[median] ?? null);
}

export function cefrReport(rows: SkillEvidenceRow[]) {
  const skills = SKILLS.map((skill) => skillLevel(skill, rows));
  return { skills, overall: overallLevel(skills) };
}

// --- Achievements ------------------------------------------------------------------------------

export interface AchievementInputs {
  itemsCompleted: number;
  lessonsCompleted: number;
  coursesCompleted: number;
  xpTotal: number;
  longestStreak: number;
  perfectLessons: number;
}

export const ACHIEVEMENTS = [
  {
    code: "first_steps",
    name: "First steps",
    description: "Pass your first training item.",
    metric: "itemsCompleted",
    target: 1,
  },
  {
    code: "first_lesson",
    name: "Lesson learned",
    description: "Complete a lesson.",
    metric: "lessonsCompleted",
    target: 1,
  },
  {
    code: "ten_lessons",
    name: "Ten down",
    description: "Complete 10 lessons.",
    metric: "lessonsCompleted",
    target: 10,
  },
  {
    code: "perfect_lesson",
    name: "Flawless",
    description: "Complete a lesson with a perfect score.",
    metric: "perfectLessons",
    target: 1,
  },
  {
    code: "course_complete",
    name: "Graduate",
    description: "Complete a course.",
    metric: "coursesCompleted",
    target: 1,
  },
  { code: "xp_1000", name: "Thousand club", description: "Earn 1,000 XP.", metric: "xpTotal", target: 1_000 },
  {
    code: "xp_10000",
    name: "Ten thousand",
    description: "Earn 10,000 XP.",
    metric: "xpTotal",
    target: 10_000,
  },
  {
    code: "streak_7",
    name: "Week warrior",
    description: "Study 7 days in a row.",
    metric: "longestStreak",
    target: 7,
  },
  {
    code: "streak_30",
    name: "Habit formed",
    description: "Study 30 days in a row.",
    metric: "longestStreak",
    target: 30,
  },
] as const satisfies ReadonlyArray<{
  code: string;
  name: string;
  description: string;
  metric: keyof AchievementInputs;
  target: number;
}>;

export type AchievementCode = (typeof ACHIEVEMENTS)[number]["code"];

export function reachedAchievements(inputs: AchievementInputs): AchievementCode[] {
  return ACHIEVEMENTS.filter((a) => inputs[a.metric] >= a.target).map((a) => a.code);
}
