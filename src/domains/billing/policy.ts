import { ALLOWED, type Decision, forbidden } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";

/**
 * Who may do what with billing. The route's ability (`billing:read` to read the plans, the
 * subscription and the trial; `billing:write` to open checkout and portal sessions and apply
 * promotion codes) is declared on the route; this holds the rest: billing is an institution's, and
 * a principal reads and changes only its own institution's. No billing operation takes an id, so
 * another institution's billing is simply out of reach.
 */

const NO_INSTITUTION =
  "Billing belongs to an institution, and this account belongs to none; use a token of an institution admin.";

/** Billing is an institution's: platform staff without one have none (403). */
export function mayUseBilling(principal: Principal): Decision {
  return principal.institution ? ALLOWED : forbidden(NO_INSTITUTION);
}

/** The institution whose billing a principal acts on. Asked only once `mayUseBilling` allowed it. */
export function billingScope(principal: Principal): { institutionId: string } {
  const institution = principal.institution;
  if (!institution) throw new Error("billingScope before mayUseBilling");
  return { institutionId: institution.id };
}
