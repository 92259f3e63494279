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

/**
 * Using a launch's LTI Advantage services (its context's roster, its line items): the launch must be
 * the caller's institution's (the route's ability says read or write). Another institution's launch,
 * like an unknown one, is not found; an account of no institution is refused (403).
 */
export function mayUseLaunchServices(
  principal: Principal,
  launch: { institutionId: string | null } | undefined,
  id: string,
): Decision {
  const institutionId = ltiInstitution(principal);
  return launch && launch.institutionId === institutionId ? ALLOWED : notFound(`No LTI launch ${id}.`);
}
