import { eq } from "drizzle-orm";
import { institutions, type Role } from "../../db/schema";
import type { Env } from "../../env";
import { enforce } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";
import { type Database, database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import type { PrincipalContext, ServiceContext } from "../../platform/service/context";
import { mayActOn } from "./policy";

/**
 * The face of institutions for the domains beside it (members): the institution row, and the
 * tenant-scoped fetch-or-404 every route under `/api/institutions/{id}/…` starts with.
 */
export type InstitutionRow = typeof institutions.$inferSelect;

async function institutionRow(db: Database, id: string): Promise<InstitutionRow> {
  const row = await db.select().from(institutions).where(eq(institutions.id, id)).get();
  if (!row) throw new ApiError("not_found", `No institution ${id}.`);
  return row;
}

/** The institution at `id`, whoever asks; 404 when there is none. */
export function findInstitution(ctx: ServiceContext, id: string): Promise<InstitutionRow> {
  return institutionRow(ctx.db, id);
}

/** The institution at `id` if the caller may act on it (`mayActOn`); otherwise, and when it does not exist, 404. */
export function institutionInScope(ctx: PrincipalContext, id: string): Promise<InstitutionRow>;
/** @deprecated The members' callers' form until they are on the service context: use `(ctx, id)`. */
export function institutionInScope(env: Env, principal: Principal, id: string): Promise<InstitutionRow>;
export async function institutionInScope(
  ...args: [PrincipalContext, string] | [Env, Principal, string]
): Promise<InstitutionRow> {
  if (args.length === 2) {
    const [ctx, id] = args;
    enforce(mayActOn(ctx.principal, { id }));
    return institutionRow(ctx.db, id);
  }
  const [env, principal, id] = args;
  enforce(mayActOn(principal, { id }));
  return institutionRow(database(env.DB), id);
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
