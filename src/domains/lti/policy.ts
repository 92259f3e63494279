import { ALLOWED, type Decision, forbidden, notFound } from "../../platform/auth/policy";
import { type Principal, requireInstitution } from "../../platform/auth/principal";
import { launchRole } from "./claims";

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
 * The name of a launch's session token. Only `issueSession` mints session tokens of this name (API
 * tokens are `kind: "api"`, and a launch session cannot mint any), so a session token carrying it is
 * that launch's.
 */
export function launchSessionName(launchId: string): string {
  return `LTI launch ${launchId}`;
}

/** What the deep-linking rule reads of a launch row. */
interface DeepLinkingLaunch {
  institutionId: string | null;
  status: string;
  kind: string | null;
  userId: string | null;
  roles: string[] | null;
}

/**
 * Choosing the content of a deep-linking launch (listing what may be linked, building the response):
 * only with that launch's own session token, which its callback answered (JSON) or its code was
 * exchanged for (browser), and only when the launch was made in an instructor's (or administrator's)
 * role. Another institution's launch, an unknown one, a refused one or a resource-link launch is not
 * found; a token other than the launch's session (another launch's, an API token, a sign-in) is
 * refused (403), as is a learner's launch.
 */
export function mayDeepLink(
  principal: Principal,
  launch: DeepLinkingLaunch | undefined,
  id: string,
): Decision {
  const missing = notFound(`No deep-linking launch ${id}.`);
  if (!launch || !principal.institution || launch.institutionId !== principal.institution.id) return missing;
  if (launch.status !== "succeeded" || launch.kind !== "deep_linking") return missing;
  const ownSession =
    principal.token.kind === "session" &&
    principal.token.name === launchSessionName(id) &&
    principal.user.id === launch.userId;
  if (!ownSession)
    return forbidden(
      `Only the session of deep-linking launch ${id} (answered by its callback) may choose its content.`,
    );
  if (launchRole(launch.roles ?? []) !== "instructor")
    return forbidden(
      "Deep linking is for instructors: the launch's roles hold no Instructor or Administrator role.",
    );
  return ALLOWED;
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
