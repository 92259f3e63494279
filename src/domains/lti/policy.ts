import { ALLOWED, type Decision, notFound } from "../../platform/auth/policy";
import { type Principal, requireInstitution } from "../../platform/auth/principal";

/**
 * Who may do what with LTI. The route's ability (`lti:read`, `lti:write`) is declared on the route;
 * this holds the rest. The launch itself (login, callback, code exchange) is public: the platform's
 * signed id_token, not a token of ours, decides it (launch/verify-id-token.ts).
 */

/**
 * The institution whose registrations and launch log a principal reads and changes: its own, for
 * every role (platform staff included). The queries are scoped to it, so another institution's
 * registration or launch answers 404; an account of no institution is refused (403).
 */
export function ltiInstitution(principal: Principal): string {
  return requireInstitution(principal).id;
}

/**
 * Rotating a registration's signing key: platform staff any registration, anybody else (the
 * institution admins, who hold `lti:write`) only their institution's. Another institution's
 * registration, like an unknown one, is not found; an account of no institution is refused (403).
 */
export function mayRotateKeys(
  principal: Principal,
  registration: { institutionId: string } | undefined,
  id: string,
): Decision {
  const missing = notFound(`No LTI registration ${id}.`);
  if (principal.user.role === "platform_admin") return registration ? ALLOWED : missing;
  return registration?.institutionId === ltiInstitution(principal) ? ALLOWED : missing;
}
