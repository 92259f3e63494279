import type { attempts, CefrLevel, Skill } from "../../../db/schema";
import type { Learner } from "../learner";
import type { Happening } from "./emit";
import type { CourseProgressRow, ItemProgressRow, LearnerState, LessonProgressRow } from "./load";
import type { AttemptOutcome } from "./types";

type Counts = { attempts: number; itemsCompleted: number; correct: number; xp: number; seconds: number };
type Slot = { weekday: number; hour: number; seconds: number; attempts: number };
type EvidenceDelta = {
  skill: Skill;
  cefrLevel: CefrLevel;
  attempts: number;
  correct: number;
  scoreSum: number;
};

/** The learner's state as the batch changes it, attempt by attempt, and what each attempt made happen. */
export interface Tally {
  learner: Learner;
  /** The batch's recording time. */
  now: string;
  lessonItemCount: Map<string, number>;
  courseLessonCount: Map<string, number>;
  /** Per-learner state, written back as the new values. */
  items: Map<string, ItemProgressRow>;
  lessons: Map<string, LessonProgressRow>;
  courses: Map<string, CourseProgressRow>;
  totals: {
    xpTotal: number;
    attempts: number;
    correct: number;
    seconds: number;
    itemsCompleted: number;
    lessonsCompleted: number;
    coursesCompleted: number;
    perfectLessons: number;
    longestStreak: number;
  };
  activeDays: Set<string>;
  unlocked: Set<string>;
  /** Deltas, added to what is stored. */
  daily: Map<string, Counts>;
  hourly: Map<string, Slot>;
  evidence: Map<string, EvidenceDelta>;
  weekly: Map<string, number>;
  /** What the batch did. */
  attemptRows: (typeof attempts.$inferInsert)[];
  outcomes: Map<string, AttemptOutcome>;
  happenings: Happening[];
  xpGained: number;
}

export function startTally(state: LearnerState, learner: Learner, now: string): Tally {
  const before = state.stats;
  return {
    learner,
    now,
    lessonItemCount: state.lessonItemCount,
    courseLessonCount: state.courseLessonCount,
    items: state.items,
    lessons: state.lessons,
    courses: state.courses,
    totals: {
      xpTotal: before?.xpTotal ?? 0,
      attempts: before?.attempts ?? 0,
      correct: before?.correct ?? 0,
      seconds: before?.seconds ?? 0,
      itemsCompleted: before?.itemsCompleted ?? 0,
      lessonsCompleted: before?.lessonsCompleted ?? 0,
      coursesCompleted: before?.coursesCompleted ?? 0,
      perfectLessons: before?.perfectLessons ?? 0,
      longestStreak: before?.longestStreak ?? 0,
    },
    activeDays: new Set(state.recentDays),
    unlocked: new Set(state.unlocked),
    daily: new Map(),
    hourly: new Map(),
    evidence: new Map(),
    weekly: new Map(),
    attemptRows: [],
    outcomes: new Map(),
    happenings: [],
    xpGained: 0,
  };
}
