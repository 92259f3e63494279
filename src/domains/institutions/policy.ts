import type { SsoDomainMethod } from "../../db/schema";
import { ALLOWED, allOf, type Decision, forbidden, holdsAbility, notFound } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";

/**
 * Who may do what to an institution, its analytics, compliance documents and SSO settings. The
 * ability each route needs is declared on the route (`tokenRoute(ability, …)`); the role, tenancy
 * and field rules are here, and nowhere else in the domain. Another institution answers 404, as if
 * it did not exist.
 */

export function isPlatformStaff(principal: Principal): boolean {
  return principal.user.role === "platform_admin";
}

/** Platform staff act on every institution, anybody else on their own only (404 for another's). */
export function mayActOn(principal: Principal, institution: { id: string }): Decision {
  return isPlatformStaff(principal) || principal.institution?.id === institution.id
    ? ALLOWED
    : notFound(`No institution ${institution.id}.`);
}

/** The institutions a principal sees in the list: every one for platform staff, otherwise its own. */
export function visibleInstitutions(principal: Principal): { all: true } | { all: false; id: string } {
  return isPlatformStaff(principal) ? { all: true } : { all: false, id: principal.institution?.id ?? "" };
}

/**
 * Only platform staff move an institution between databases (and see where it lives); an
 * institution's own members are refused (403), another institution answers 404.
 */
export function mayMoveInstitution(principal: Principal, institution: { id: string }): Decision {
  if (isPlatformStaff(principal)) return ALLOWED;
  return allOf(
    mayActOn(principal, institution),
    forbidden("Only platform staff move an institution to another database."),
  );
}

/** Only platform staff create institutions. */
export function mayCreateInstitution(principal: Principal): Decision {
  return isPlatformStaff(principal) ? ALLOWED : forbidden("Only platform staff create institutions.");
}

/** The settings only platform staff change, and only with `institutions:write`. */
export const STAFF_ONLY_FIELDS = ["plan", "rate_limit_per_minute", "seats"] as const;
export type StaffOnlyField = (typeof STAFF_ONLY_FIELDS)[number];

/**
 * Changing an institution (the route needs `members:write`: its settings go with administering it):
 * its admins change name, branding, locale and time zone; `plan`, `rate_limit_per_minute` and
 * `seats` are platform staff's, whose token must also hold `institutions:write` to change them.
 */
export function mayUpdateInstitution(
  principal: Principal,
  institution: { id: string },
  changes: Partial<Record<StaffOnlyField, unknown>>,
): Decision {
  const staffFields = STAFF_ONLY_FIELDS.filter((field) => changes[field] !== undefined);
  if (isPlatformStaff(principal))
    return staffFields.length > 0 ? holdsAbility(principal, "institutions:write") : ALLOWED;
  return allOf(
    mayActOn(principal, institution),
    principal.user.role === "institution_admin"
      ? ALLOWED
      : forbidden("Only the institution's admins change its settings."),
    staffFields.length > 0
      ? forbidden(`Only platform staff change ${staffFields.map((f) => `\`${f}\``).join(", ")}.`)
      : ALLOWED,
  );
}

/** Only platform staff record compliance documents (anybody else: 404 for another institution's). */
export function mayRecordCompliance(principal: Principal, institution: { id: string }): Decision {
  return allOf(
    mayActOn(principal, institution),
    isPlatformStaff(principal) ? ALLOWED : forbidden("Only platform staff record compliance documents."),
  );
}

/** Anybody with the route's ability verifies by DNS; only platform staff confirm a domain without it. */
export function mayVerifySsoDomain(
  principal: Principal,
  institution: { id: string },
  method: SsoDomainMethod,
): Decision {
  return allOf(
    mayActOn(principal, institution),
    method === "manual" && !isPlatformStaff(principal)
      ? forbidden(
          'Only platform staff may confirm a domain without DNS: publish the TXT record and verify with method "dns".',
        )
      : ALLOWED,
  );
}
