import { type Principal, requireInstitution } from "../../platform/auth/principal";

/**
 * Who may do what with xAPI endpoints, their test call and forwarding log. The route declares the
 * ability (`xapi:read` to see, `xapi:write` to change or test); what is left is tenancy, the same for
 * every role that holds the ability: a principal works on its own institution's endpoints, a
 * principal of no institution (platform staff) is refused (403), and another institution's endpoint
 * answers 404, as if it did not exist (the services read within this scope).
 */
export function xapiScope(principal: Principal): { institutionId: string } {
  return { institutionId: requireInstitution(principal).id };
}
