import { eq } from "drizzle-orm";
import { institutions } from "../../db/schema";
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
