import type { CheckedAttempt } from "./validate";

export interface OrderedAttempt extends CheckedAttempt {
  /** When it counts as having happened (ms): the time sent, or now if that is ahead of us. */
  at: number;
  /** Already recorded, or sent earlier in this batch: reported, counted nothing. */
  duplicate: boolean;
}

/**
 * Puts the attempts in the order of the times sent, so that "first pass" and completion times follow
 * what the learner did, and marks the duplicates. A time up to the allowed clock skew ahead of ours
 * counts as now: otherwise, just before the learner's midnight, it would fall on their tomorrow and
 * their streak read 0.
 */
export function dedupeAttempts(
  checked: CheckedAttempt[],
  recordedIds: ReadonlySet<string>,
  nowMs: number,
): OrderedAttempt[] {
  const seenInBatch = new Set<string>();
  return checked
    .map((entry, index) => ({ entry, index, sent: Date.parse(entry.attempt.occurred_at) }))
    .sort((a, b) => a.sent - b.sent || a.index - b.index)
    .map(({ entry, sent }) => {
      const { id } = entry.attempt;
      const duplicate = recordedIds.has(id) || seenInBatch.has(id);
      seenInBatch.add(id);
      return { ...entry, at: Math.min(sent, nowMs), duplicate };
    });
}
