import type { ItemRow, LearnerState } from "./load";
import type { AttemptInput, RecordRefusal } from "./types";

export interface CheckedAttempt {
  attempt: AttemptInput;
  item: ItemRow;
}

/**
 * Checks the batch against the data: every item must belong to a published course, and no attempt
 * id may already be recorded for another learner. Either refuses the whole batch or pairs each
 * attempt with its item.
 */
export function validateAttempts(
  input: AttemptInput[],
  state: Pick<LearnerState, "itemById" | "recorded">,
  learnerId: string,
): { ok: true; checked: CheckedAttempt[] } | RecordRefusal {
  const checked: CheckedAttempt[] = [];
  const errors: { path: string; message: string }[] = [];
  input.forEach((attempt, index) => {
    const item = state.itemById.get(attempt.training_item_id);
    if (item?.published) checked.push({ attempt, item });
    else
      errors.push({
        path: `attempts.${index}.training_item_id`,
        message: "is not a training item of a published course",
      });
  });
  if (errors.length > 0)
    return {
      ok: false,
      code: "validation_failed",
      detail: errors.map((e) => `${e.path}: ${e.message}`).join("; "),
      errors,
    };
  const foreign = state.recorded.filter((e) => e.userId !== learnerId);
  if (foreign.length > 0) {
    return {
      ok: false,
      code: "conflict",
      detail: `Attempt id ${foreign.map((f) => f.id).join(", ")} was already recorded for another learner; use a new UUID.`,
    };
  }
  return { ok: true, checked };
}
