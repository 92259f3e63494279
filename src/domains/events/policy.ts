import { type Principal, requireInstitution } from "../../platform/auth/principal";

/**
 * Who may read which events. The route declares `events:read`; the rest is tenancy: a principal
 * reads its own institution's events, a principal of no institution (platform staff) is refused
 * (403), and another institution's event answers 404, as if it did not exist (the service reads
 * within this scope).
 */
export function eventScope(principal: Principal): { institutionId: string } {
  return { institutionId: requireInstitution(principal).id };
}
