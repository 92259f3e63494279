import type { ConsumerRow } from "../registrations/service";

/** Why a launch was refused: a stable code for the log and the error's `reason`. */
export class LaunchRefusal extends Error {
  constructor(
    readonly reason: string,
    detail: string,
    /** Known once the state was: the log entry belongs to its institution. */
    readonly consumer: ConsumerRow | null = null,
    readonly upstream = false,
  ) {
    super(detail);
  }
}
