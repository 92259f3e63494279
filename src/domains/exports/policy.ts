import { EXPORT_TYPES, type ExportType, type Role } from "../../db/schema";
import { ALLOWED, allOf, type Decision, forbidden, notFound } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";

/**
 * Who may do what with exports. The route's ability (`exports:read` to list, read and download,
 * `exports:write` to request) is declared on the route; this holds the rest: exports belong to an
 * institution, and a principal sees and requests only its own institution's.
 */

const NO_INSTITUTION =
  "This resource belongs to an institution, and this account belongs to none; use a token of an institution admin.";

/**
 * Exports are an institution's: platform staff without an institution have no data to export here
 * and are refused with 403.
 */
export function mayUseExports(principal: Principal): Decision {
  return principal.institution ? ALLOWED : forbidden(NO_INSTITUTION);
}

/**
 * The query scope of the exports a principal sees: its institution's. Asked only once
 * `mayUseExports` allowed the principal, so that there is one.
 */
export function visibleExports(principal: Principal): { institutionId: string } {
  const institution = principal.institution;
  if (!institution) throw new Error("visibleExports before mayUseExports");
  return { institutionId: institution.id };
}

/** One export: another institution's (or none at all) answers 404, as if it did not exist. */
export function mayReadExport(
  principal: Principal,
  exportId: string,
  job: { institutionId: string } | null,
): Decision {
  return allOf(
    mayUseExports(principal),
    job && job.institutionId === principal.institution?.id ? ALLOWED : notFound(`No export ${exportId}.`),
  );
}

/**
 * The export types each role may request. Today every type, for every role that may hold
 * `exports:write` at all (the role ceilings of platform/auth/abilities.ts give it to the admins
 * only): the place to narrow when a type is not for everybody.
 */
export const REQUESTABLE_TYPES: Record<Role, readonly ExportType[]> = {
  platform_admin: EXPORT_TYPES,
  institution_admin: EXPORT_TYPES,
  instructor: EXPORT_TYPES,
  learner: EXPORT_TYPES,
};

/** A new export: of the principal's own institution, of a type its role may request. */
export function mayRequestExport(principal: Principal, type: ExportType): Decision {
  return allOf(
    mayUseExports(principal),
    REQUESTABLE_TYPES[principal.user.role].includes(type)
      ? ALLOWED
      : forbidden(`The ${principal.user.role} role cannot request \`${type}\` exports.`),
  );
}
