import type { attempts, XapiActivity } from "../../../db/schema";

/**
 * A learning fact an endpoint may receive as one statement: what the outbox subscriber reads from an
 * event (and a back-fill from the tables), before anything about the LRS is known. Each fact has a
 * `key` that names it for good, so the same fact always becomes the same statement id
 * (statements/ids.ts) for an endpoint.
 */
export type Fact =
  /** One recorded attempt at a training item. */
  | { verb: "answered"; attempt: typeof attempts.$inferSelect }
  /** A lesson's progress moved on (items done out of its items) without completing it. */
  | {
      verb: "progressed";
      userId: string;
      lessonId: string;
      courseId: string;
      itemsDone: number;
      itemsTotal: number;
      at: string;
    }
  /** Every item of a lesson done (`score`: the mean of the best scores, 0–1). */
  | {
      verb: "completed";
      object: "lesson";
      userId: string;
      lessonId: string;
      courseId: string;
      score: number;
      at: string;
    }
  /** Every lesson of a course done. */
  | { verb: "completed"; object: "course"; userId: string; courseId: string; at: string }
  /** A CEFR level reached for a skill (`overall` for the learner's overall level). */
  | { verb: "mastered"; userId: string; skill: string; level: string; at: string }
  /** An achievement unlocked. */
  | { verb: "earned"; userId: string; code: string; name: string; at: string };

export type FactVerb = Fact["verb"] & XapiActivity;

/** The fact's lasting name: `answered:<attempt>`, `completed:lesson:<user>:<lesson>`, …. */
export function factKey(fact: Fact): string {
  switch (fact.verb) {
    case "answered":
      return `answered:${fact.attempt.id}`;
    case "progressed":
      return `progressed:${fact.userId}:${fact.lessonId}:${fact.itemsDone}`;
    case "completed":
      return fact.object === "lesson"
        ? `completed:lesson:${fact.userId}:${fact.lessonId}`
        : `completed:course:${fact.userId}:${fact.courseId}`;
    case "mastered":
      return `mastered:${fact.userId}:${fact.skill}:${fact.level}`;
    case "earned":
      return `earned:${fact.userId}:${fact.code}`;
  }
}

/** Whose fact it is. */
export function factUser(fact: Fact): string {
  return fact.verb === "answered" ? fact.attempt.userId : fact.userId;
}
