import type { Role } from "../../db/schema";
import { ApiError } from "../../platform/errors";

/** The members' rules that the API (service.ts) and a directory (directory.ts, member-change.ts) both apply. */

/** Why an insert or update of a member broke a unique constraint, as the problem to answer. */
export function uniqueConflict(error: unknown): ApiError | null {
  const text = String(error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : error);
  if (/UNIQUE constraint failed: users\.email/.test(text))
    return new ApiError("email_taken", "This e-mail address already belongs to an account.");
  if (/UNIQUE constraint failed: users\.institution_id, users\.external_id/.test(text))
    return new ApiError("external_id_taken", "Another member of the institution has this external_id.");
  return null;
}

export function seatError(): ApiError {
  return new ApiError(
    "seat_limit_reached",
    "Every seat of the institution is taken (invited and active members count); suspend or remove a member, or ask for more seats.",
  );
}

export function lastAdminError(orSeats = false): ApiError {
  return new ApiError(
    "last_admin",
    `This would leave the institution without an active institution admin${orSeats ? " (or exceed its seats)" : ""}; make another member admin first.`,
  );
}

/** Whether the change takes an active admin away (demotion or suspension). */
export function takesAdminAway(current: { role: Role; status: string }, role: Role, status: string): boolean {
  return (
    current.role === "institution_admin" &&
    current.status === "active" &&
    (role !== "institution_admin" || status !== "active")
  );
}
