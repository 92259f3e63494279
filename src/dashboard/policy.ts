import type { Role } from "../db/schema";
import { ALLOWED, type Decision, forbidden, notFound } from "../platform/auth/policy";
import type { Principal } from "../platform/auth/principal";

/**
 * Who may use the admin dashboard: institution admins (their own institution) and platform staff
 * (who choose an institution). Learners and instructors get no dashboard page. Everything a page
 * does beyond this is decided by the domain services and policies it calls, as for the API.
 */
const DASHBOARD_ROLES: readonly Role[] = ["institution_admin", "platform_admin"];

export const NOT_FOR_YOUR_ROLE =
  "The dashboard is for institution administrators. Your account signs in to the Lingua apps instead.";

export function mayUseDashboard(principal: Pick<Principal, "user">): Decision {
  return roleMayUseDashboard(principal.user.role) ? ALLOWED : forbidden(NOT_FOR_YOUR_ROLE);
}

export function roleMayUseDashboard(role: Role): boolean {
  return DASHBOARD_ROLES.includes(role);
}

/** Platform staff act on an institution they choose; an admin on their own. */
export function choosesInstitution(principal: Pick<Principal, "user">): boolean {
  return principal.user.role === "platform_admin";
}

/** Only platform staff choose an institution; for anybody else the picker does not exist. */
export function mayChooseInstitution(principal: Pick<Principal, "user">): Decision {
  return choosesInstitution(principal) ? ALLOWED : notFound("No such page.");
}
