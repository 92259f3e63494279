import type { InstitutionMove } from "../../platform/move/jobs";
import type { MoveProgress } from "../../platform/move/run";

/** A move as the API shows it. */
export function presentMove(move: InstitutionMove) {
  const progress = move.progress as unknown as MoveProgress;
  return {
    id: move.id,
    institution_id: move.institutionId,
    source: move.source,
    target: move.target,
    state: move.state,
    progress: {
      copied: progress.copied ?? {},
      verified: progress.verified ?? {},
      deleted: progress.deleted ?? {},
      freeze_ms: progress.freezeMs ?? null,
    },
    error: move.error,
    created_at: move.createdAt,
    completed_at: move.completedAt,
  };
}
