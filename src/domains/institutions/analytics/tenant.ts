import { eq } from "drizzle-orm";
import { institutions } from "../../../db/schema";
import type { Principal } from "../../../platform/auth/principal";
import type { Database } from "../../../platform/db";
import { ApiError } from "../../../platform/errors";

/** True for platform staff, who act on every institution's paths. */
export function isPlatformStaff(principal: Principal): boolean {
  return principal.user.role === "platform_admin";
}

/**
 * Whether the caller may reach this institution's paths at all: platform staff every institution,
 * anybody else only their own. Another institution's id answers 404, never 403, so that ids leak
 * nothing. Existence is checked by the caller's own read of the institution.
 */
export function assertInstitutionReachable(principal: Principal, institutionId: string): void {
  if (isPlatformStaff(principal)) return;
  if (principal.institution?.id !== institutionId) throw institutionNotFound(institutionId);
}

export function institutionNotFound(institutionId: string): ApiError {
  return new ApiError("not_found", `No institution ${institutionId}.`);
}

/** The institution's row, or 404 for a caller who may not see it or an unknown id. */
export async function fetchInstitutionOrThrow(db: Database, principal: Principal, institutionId: string) {
  assertInstitutionReachable(principal, institutionId);
  const row = await db.select().from(institutions).where(eq(institutions.id, institutionId)).get();
  if (!row) throw institutionNotFound(institutionId);
  return row;
}
