import { eq } from "drizzle-orm";
import { institutions } from "../../db/schema";
import { enforce } from "../../platform/auth/policy";
import type { Database } from "../../platform/db";
import { ApiError } from "../../platform/errors";
import type { PrincipalContext, ServiceContext } from "../../platform/service/context";
import { mayActOn } from "./policy";

/**
 * The face of institutions for its sub-folders (analytics, SSO, compliance): the institution row, and the
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
export async function institutionInScope(ctx: PrincipalContext, id: string): Promise<InstitutionRow> {
  enforce(mayActOn(ctx.principal, { id }));
  return institutionRow(ctx.db, id);
}
