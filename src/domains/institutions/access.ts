import { eq } from "drizzle-orm";
import { institutions, type Role } from "../../db/schema";
import type { Env } from "../../env";
import type { Principal } from "../../platform/auth/principal";
import { database } from "../../platform/db";
import { ApiError } from "../../platform/errors";

export type InstitutionRow = typeof institutions.$inferSelect;

export function isPlatformStaff(principal: Principal): boolean {
  return principal.user.role === "platform_admin";
}

/** Whether the caller may act on institution `id` at all: platform staff on every one, others on their own. */
export function mayActOn(principal: Principal, id: string): boolean {
  return isPlatformStaff(principal) || principal.institution?.id === id;
}

/** The institution at `id` if the caller may act on it; otherwise, and when it does not exist, 404. */
export async function institutionInScope(
  env: Env,
  principal: Principal,
  id: string,
): Promise<InstitutionRow> {
  if (!mayActOn(principal, id)) throw notFound(id);
  const row = await database(env.DB).select().from(institutions).where(eq(institutions.id, id)).get();
  if (!row) throw notFound(id);
  return row;
}

function notFound(id: string): ApiError {
  return new ApiError("not_found", `No institution ${id}.`);
}

const RANK: Record<Role, number> = { learner: 0, instructor: 1, institution_admin: 2, platform_admin: 3 };

/** Roles a member can have; platform staff are not members of any institution. */
export const MEMBER_ROLES = ["institution_admin", "instructor", "learner"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** Nobody grants a role above their own, and nobody makes a platform admin through these endpoints. */
export function mayGrant(granter: Role, role: Role): boolean {
  return role !== "platform_admin" && RANK[role] <= RANK[granter];
}

export function roleCeilingError(granter: Role, role: Role): ApiError {
  return new ApiError("forbidden", `A ${granter} cannot grant the ${role} role, which is above their own.`);
}
