import { ALLOWED, type Decision, notFound } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";

/**
 * Who may manage an institution's SCIM tokens and settings. The ability (`sso:read`, `sso:write`) is
 * declared on the route; this holds the tenancy: platform staff reach every institution's, everybody
 * else their own institution's; another institution answers 404, as if it did not exist.
 *
 * The SCIM service itself has no caller's role: its bearer token is the institution's directory and
 * reaches exactly that institution's members and groups (`ScimCaller`, auth.ts).
 */
export function mayManageScimOf(principal: Principal, institutionId: string): Decision {
  return principal.user.role === "platform_admin" || principal.institution?.id === institutionId
    ? ALLOWED
    : notFound(`No institution ${institutionId}.`);
}
