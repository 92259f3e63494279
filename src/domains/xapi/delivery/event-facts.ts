import { CEFR_LEVELS } from "../../../db/schema";
import type { Fact } from "../statements";
import type { ForwardedEventRow, LessonInProgressRow } from "./sql";

/**
 * How an outbox event, or a lesson in progress, becomes facts: written once, for the outbox
 * subscriber (subscriber.ts) and the back-fill (backfill/), so that both make the same facts and
 * so the same statement ids (statements/facts.ts `factKey`) — an LRS never gets a fact twice under
 * two ids.
 */

type Payload = Record<string, unknown>;

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** A CEFR change to a higher level (from none counts) is a level mastered. */
function rises(from: unknown, to: unknown): boolean {
  const levels = CEFR_LEVELS as readonly unknown[];
  return levels.includes(to) && (from === null || levels.indexOf(from) < levels.indexOf(to));
}

/** The event's payload as an object (the outbox stores it as JSON text). */
export function eventPayload(event: Pick<ForwardedEventRow, "payload">): Payload {
  return JSON.parse(event.payload) as Payload;
}

/** The facts of the events that are not about single attempts. */
export function eventFacts(event: ForwardedEventRow, payload: Payload): Fact[] {
  const userId = text(payload.user_id) ?? event.user_id;
  if (!userId) return [];
  switch (event.type) {
    case "lesson.completed": {
      const lessonId = text(payload.lesson_id);
      const courseId = text(payload.course_id);
      if (!lessonId || !courseId) return [];
      const score = typeof payload.score === "number" ? payload.score : 1;
      const at = text(payload.completed_at) ?? event.created_at;
      return [{ verb: "completed", object: "lesson", userId, lessonId, courseId, score, at }];
    }
    case "course.completed": {
      const courseId = text(payload.course_id);
      if (!courseId) return [];
      return [
        {
          verb: "completed",
          object: "course",
          userId,
          courseId,
          at: text(payload.completed_at) ?? event.created_at,
        },
      ];
    }
    case "cefr.level_changed": {
      const skill = text(payload.skill);
      const level = text(payload.to);
      if (!skill || !level || !rises(payload.from ?? null, level)) return [];
      return [{ verb: "mastered", userId, skill, level, at: event.created_at }];
    }
    case "achievement.unlocked": {
      const code = text(payload.code);
      if (!code) return [];
      const name = text(payload.name) ?? code;
      return [{ verb: "earned", userId, code, name, at: text(payload.unlocked_at) ?? event.created_at }];
    }
    default:
      return [];
  }
}

/** A lesson still in progress with items done: one `progressed` fact per step (items done). */
export function progressedFact(lesson: LessonInProgressRow): Fact {
  return {
    verb: "progressed",
    userId: lesson.user_id,
    lessonId: lesson.lesson_id,
    courseId: lesson.course_id,
    itemsDone: lesson.items_done,
    itemsTotal: lesson.items_total,
    at: lesson.last_activity_at,
  };
}

/** A lesson's score as its `lesson.completed` event carries it: the mean best score, to 3 decimals. */
export function lessonScore(scoreSum: number, itemsDone: number): number {
  const score = itemsDone > 0 ? scoreSum / itemsDone : 0;
  return Math.round(score * 1000) / 1000;
}
