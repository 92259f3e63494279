import { ALLOWED, type Decision, forbidden } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";

/**
 * Who may read or record whose progress, and what a leaderboard shows whom. The route's ability
 * (`progress:read`, `progress:write`, `stats:read`) is declared on the route; this holds the rest.
 */

export type LearnerPurpose = "read" | "write";

/**
 * Anybody may read and record their own progress (no `user_id`, or their own). Naming somebody else:
 * platform staff and institution admins may read and record, instructors only read; a learner is
 * refused (403). Whether the named user is one the caller may reach is `learnerScope`'s answer.
 */
export function mayActFor(
  principal: Principal,
  request: { userId: string | undefined; purpose: LearnerPurpose },
): Decision {
  if (!request.userId || request.userId === principal.user.id) return ALLOWED;
  const role = principal.user.role;
  const forOthers =
    role === "platform_admin" ||
    role === "institution_admin" ||
    (role === "instructor" && request.purpose === "read");
  return forOthers
    ? ALLOWED
    : forbidden(`A ${role} may only ${request.purpose === "read" ? "read" : "record"} their own progress.`);
}

/**
 * The users whose progress a principal `mayActFor` may name: platform staff anyone, everybody else
 * the members of their own institution (none without one). A user outside answers 404, as if
 * unknown.
 */
export function learnerScope(principal: Principal): { everyone: true } | { institutionId: string | null } {
  return principal.user.role === "platform_admin"
    ? { everyone: true }
    : { institutionId: principal.institution?.id ?? null };
}

/**
 * Platform staff see every institution's names on the platform leaderboard (opted-out learners stay
 * anonymous to everybody), and read the platform board unless they ask for another.
 */
export function seesEveryLeaderboardName(principal: Principal): boolean {
  return principal.user.role === "platform_admin";
}

/** The board a leaderboard request without `scope` reads: the platform's for staff and for a learner without an institution. */
export function defaultLeaderboardScope(
  principal: Principal,
  learner: { institutionId: string | null },
): "platform" | "institution" {
  return seesEveryLeaderboardName(principal) || !learner.institutionId ? "platform" : "institution";
}
