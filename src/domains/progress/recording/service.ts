import { nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import type { Learner } from "../learner";
import { dedupeAttempts } from "./dedupe";
import { deriveAttempt } from "./derive-attempt";
import { deriveLearner, type LearnerAfter } from "./derive-learner";
import { attemptsRecordedEvent, type EmittedEvent, emitEvents } from "./emit";
import { institutionRollupStep } from "./institution-rollup";
import { loadLearnerState } from "./load";
import { startTally, type Tally } from "./tally";
import type { AttemptInput, AttemptOutcome, RecordResult } from "./types";
import { validateAttempts } from "./validate";
import { collectChanges, writeStatements } from "./write";

/**
 * Records a batch of attempts for one learner and maintains every aggregate and the outbox.
 *
 * Transaction boundary: one D1 batch reads the learner's state (`loadLearnerState`), one D1 batch
 * writes everything the recording changes — attempts, progress, aggregates, ranks, and the outbox
 * rows of its events — atomically (`writeStatements` and the events, through `commit`, which then
 * publishes the events on `ctx.waitUntil`); everything in between is pure. The caller serialises
 * calls per learner (ProgressRecorder), so the state read is the state the write goes over; the
 * plain INSERT of the attempts makes a concurrent resend of the same ids (from a second recorder
 * instance during a failover) abort the whole write instead of counting twice.
 */
export async function recordAttempts(
  ctx: ServiceContext,
  { learner, attempts: input }: { learner: Learner; attempts: AttemptInput[] },
): Promise<RecordResult> {
  const { db } = ctx;
  const nowMs = ctx.now();
  const state = await loadLearnerState(db, learner, input); // D1 batch 1: read
  const valid = validateAttempts(input, state, learner.id);
  if (!valid.ok) return valid;
  const ordered = dedupeAttempts(valid.checked, new Set(state.recorded.map((r) => r.id)), nowMs);

  const now = nowIso(nowMs);
  const tally = startTally(state, learner, now);
  for (const attempt of ordered) deriveAttempt(tally, attempt);
  const after = deriveLearner(tally, state, nowMs);
  const events = emitEvents(tally.happenings, learner, now);
  const recorded = attemptsRecordedEvent(
    tally.attemptRows.map((a) => a.id),
    learner,
    now,
  );

  const statements = [
    ...writeStatements(db, collectChanges(tally, after, state)),
    // The institution's analytics rollup (per day, learner and course), counted with the attempts.
    ...institutionRollupStep(db, tally, state),
  ];
  // D1 batch 2: write (nothing when all were duplicates); the internal event rides along, unlisted.
  await commit(ctx, { statements, events: recorded ? [...events, recorded] : events });

  return {
    ok: true,
    outcomes: input.map((a) => outcomeOf(tally, a.id)),
    summary: summarise(tally, after, events, input),
  };
}

function summarise(tally: Tally, after: LearnerAfter, events: EmittedEvent[], input: AttemptInput[]) {
  const { happenings } = tally;
  return {
    recorded: tally.attemptRows.length,
    duplicates: input.length - tally.attemptRows.length,
    xp_gained: tally.xpGained,
    xp_total: tally.totals.xpTotal,
    lessons_completed: happenings.flatMap((h) => (h.type === "lesson.completed" ? [h.lessonId] : [])),
    courses_completed: happenings.flatMap((h) => (h.type === "course.completed" ? [h.courseId] : [])),
    achievements_unlocked: happenings.flatMap((h) => (h.type === "achievement.unlocked" ? [h.code] : [])),
    current_streak: after.streakNow,
    events: events.map((e) => ({ id: e.id, type: e.type })),
  };
}

/** Every attempt sent has an outcome: deriveAttempt sets one for each, recorded or duplicate. */
function outcomeOf(tally: Tally, id: string): AttemptOutcome {
  const outcome = tally.outcomes.get(id);
  if (!outcome) throw new Error(`no outcome for attempt ${id}`);
  return outcome;
}
