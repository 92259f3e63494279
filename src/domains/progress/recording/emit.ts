import { domainEvent, type OutboxRow } from "../../../platform/events";
import type { Learner } from "../learner";

/** What a batch made happen to the learner, in the order it happened: each becomes one outbox event. */
export type Happening =
  | { type: "lesson.completed"; lessonId: string; courseId: string; score: number; items: number; at: string }
  | { type: "course.completed"; courseId: string; xp: number; at: string }
  | { type: "achievement.unlocked"; code: string; name: string; at: string }
  | { type: "streak.milestone"; days: number; day: string }
  | { type: "cefr.level_changed"; skill: string; from: string | null; to: string | null };

export type EmittedEvent = OutboxRow & { id: string };

/**
 * The events of the batch's happenings, with the payloads webhooks deliver. `commit` writes them in
 * the same D1 batch as the attempts (recording/service.ts) and publishes them once it committed.
 */
export function emitEvents(happenings: Happening[], learner: Learner, now: string): EmittedEvent[] {
  const scope = { institutionId: learner.institutionId, userId: learner.id };
  return happenings.map((happening) => {
    const row = domainEvent(happening.type, scope, payloadOf(happening, learner.id), now);
    // domainEvent always assigns the id; the insert type merely leaves it optional.
    if (row.id === undefined) throw new Error("an outbox event without an id");
    return { ...row, id: row.id };
  });
}

/**
 * The internal `attempts.recorded` event (platform/events.ts) of a batch that stored new attempts of a
 * member of an institution: their ids, for the institution's integrations (xAPI forwarding builds its
 * statements from them in the events queue's consumer, never in the recording request). None for a
 * learner outside any institution or a batch of duplicates only. Never delivered to webhooks.
 */
export function attemptsRecordedEvent(
  attemptIds: readonly string[],
  learner: Learner,
  now: string,
): EmittedEvent | null {
  if (!learner.institutionId || attemptIds.length === 0) return null;
  const scope = { institutionId: learner.institutionId, userId: learner.id };
  const row = domainEvent("attempts.recorded", scope, { user_id: learner.id, attempt_ids: attemptIds }, now);
  if (row.id === undefined) throw new Error("an outbox event without an id");
  return { ...row, id: row.id };
}

function payloadOf(happening: Happening, userId: string): Record<string, unknown> {
  switch (happening.type) {
    case "lesson.completed":
      return {
        user_id: userId,
        lesson_id: happening.lessonId,
        course_id: happening.courseId,
        score: Math.round(happening.score * 1000) / 1000,
        items: happening.items,
        completed_at: happening.at,
      };
    case "course.completed":
      return { user_id: userId, course_id: happening.courseId, xp: happening.xp, completed_at: happening.at };
    case "achievement.unlocked":
      return { user_id: userId, code: happening.code, name: happening.name, unlocked_at: happening.at };
    case "streak.milestone":
      return { user_id: userId, days: happening.days, day: happening.day };
    case "cefr.level_changed":
      return { user_id: userId, skill: happening.skill, from: happening.from, to: happening.to };
  }
}
