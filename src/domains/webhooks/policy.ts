import { type Principal, requireInstitution } from "../../platform/auth/principal";

/**
 * Who may do what with webhooks, their deliveries, test pings and secrets. The route declares the
 * ability (`webhooks:read` to see, `webhooks:write` to change or send); what is left is tenancy, the
 * same for every role that holds the ability: a principal works on its own institution's webhooks,
 * a principal of no institution (platform staff) is refused (403), and another institution's webhook
 * or delivery answers 404, as if it did not exist (the services read within this scope).
 */
export function webhookScope(principal: Principal): { institutionId: string } {
  return { institutionId: requireInstitution(principal).id };
}
