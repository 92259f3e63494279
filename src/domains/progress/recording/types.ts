import type { LessonStatus } from "../../../db/schema";

/** One attempt as the client sent it (validated by recording/schemas.ts). */
export interface AttemptInput {
  id: string;
  training_item_id: string;
  score: number;
  correct: boolean;
  duration_seconds: number;
  occurred_at: string;
}

/** What recording one attempt changed, as the response reports it. */
export interface AttemptOutcome {
  id: string;
  status: "recorded" | "duplicate";
  xp_gained: number;
  item_completed: boolean;
  lesson: {
    id: string;
    status: LessonStatus;
    items_done: number;
    items_total: number;
    percent: number;
  } | null;
  course_completed: boolean;
  achievements_unlocked: string[];
}

export interface RecordSummary {
  recorded: number;
  duplicates: number;
  xp_gained: number;
  xp_total: number;
  lessons_completed: string[];
  courses_completed: string[];
  achievements_unlocked: string[];
  current_streak: number;
  events: { id: string; type: string }[];
}

export interface RecordRefusal {
  ok: false;
  code: "validation_failed" | "conflict";
  detail: string;
  errors?: { path: string; message: string }[];
}

export type RecordResult = { ok: true; outcomes: AttemptOutcome[]; summary: RecordSummary } | RecordRefusal;
