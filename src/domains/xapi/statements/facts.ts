import type { attempts, XapiActivity } from "../../../db/schema";

/**
 * A learning fact an endpoint may receive as one statement: what the outbox subscriber reads from an
 * event (and a back-fill from the tables), before anything about the LRS is known. Each fact has a
 * `key` that names it for good, so the same fact always becomes the same statement id
 * (statements/ids.ts) for an endpoint.
 */
export type Fact =
  /** One recorded attempt at a training item. */
  | { verb: "answered"; attempt: AttemptFact }
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

/** What an `answered` statement is built from of its attempt (a whole `attempts` row will do). */
export type AttemptFact = Pick<
  typeof attempts.$inferSelect,
  | "id"
  | "userId"
  | "trainingItemId"
  | "lessonId"
  | "courseId"
  | "score"
  | "correct"
  | "durationSeconds"
  | "occurredAt"
  | "xpAwarded"
>;

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

/**
 * A fact as a batch keeps it until its statements are sent (`xapi_batches.facts`): an attempt by its
 * id (its row is read again to rebuild the statement), every other fact whole (small, and read from
 * events or progress that may have moved on since). `restoreFact` turns it back into the same fact,
 * so the same statement id.
 */
export type StoredFact = ["answered", string] | Exclude<Fact, { verb: "answered" }>;

export function storedFact(fact: Fact): StoredFact {
  return fact.verb === "answered" ? ["answered", fact.attempt.id] : fact;
}

/** The attempt a stored fact names, if it is one. */
export function storedAttemptId(stored: StoredFact): string | null {
  return Array.isArray(stored) ? stored[1] : null;
}

/** The fact again, given the attempts it may name (by id); null when its attempt is gone. */
export function restoreFact(stored: StoredFact, attemptsById: ReadonlyMap<string, AttemptFact>): Fact | null {
  if (!Array.isArray(stored)) return stored;
  const attempt = attemptsById.get(stored[1]);
  return attempt ? { verb: "answered", attempt } : null;
}
