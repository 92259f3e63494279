import type { Role } from "../../db/schema";
import { ALLOWED, type Decision, forbidden, notFound } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";

/**
 * Who may do what to an institution's members, their invitations and bulk uploads. The route's
 * ability (`members:read`, `members:write`) is declared on the route; this holds the rest: which
 * institution's members a principal reaches, and the role ceiling (nobody grants, changes, removes
 * or re-invites a role above their own).
 */

/** Roles a member can have; platform staff are not members of any institution. */
export const MEMBER_ROLES = ["institution_admin", "instructor", "learner"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

const RANK: Record<Role, number> = { learner: 0, instructor: 1, institution_admin: 2, platform_admin: 3 };

/** Nobody grants a role above their own, and nobody makes a platform admin through these endpoints. */
export function mayGrant(granter: Role, role: Role): boolean {
  return role !== "platform_admin" && RANK[role] <= RANK[granter];
}

/**
 * The members (and bulk uploads) of institution `institutionId`: platform staff reach every
 * institution's, everybody else their own institution's. Another institution answers 404, as if it
 * did not exist.
 */
export function mayReachMembersOf(principal: Principal, institutionId: string): Decision {
  return principal.user.role === "platform_admin" || principal.institution?.id === institutionId
    ? ALLOWED
    : notFound(`No institution ${institutionId}.`);
}

/** Granting `role` (a new member's, or a member's new role): not above the caller's own. */
export function mayGrantRole(principal: Principal, role: Role): Decision {
  const granter = principal.user.role;
  return mayGrant(granter, role)
    ? ALLOWED
    : forbidden(`A ${granter} cannot grant the ${role} role, which is above their own.`);
}

/**
 * Changing, removing or re-inviting a member: only one whose role the caller could grant, and,
 * when the change gives a new role, only a role the caller could grant.
 */
export function mayChangeMember(principal: Principal, member: { role: Role }, newRole?: Role): Decision {
  const current = mayGrantRole(principal, member.role);
  if (!current.allowed || newRole === undefined) return current;
  return mayGrantRole(principal, newRole);
}

/**
 * The roles whose invitation URLs a reader of a bulk upload's report may see (and so use up): a
 * reader who could issue them, with `members:write` and within the role ceiling. None otherwise.
 */
export function invitationRolesShownTo(principal: Principal): MemberRole[] {
  if (!principal.token.abilities.includes("members:write")) return [];
  return MEMBER_ROLES.filter((role) => mayGrant(principal.user.role, role));
}

/**
 * Re-issuing a finished bulk upload's invitations: as a re-invite, for the members whose role the
 * caller could grant (the others are left as they are and counted); refused to a caller who may
 * issue none.
 */
export function mayReissueBulkInvitations(principal: Principal): Decision {
  return invitationRolesShownTo(principal).length > 0
    ? ALLOWED
    : forbidden("Only a caller who may invite members (`members:write`) re-issues invitations.");
}
