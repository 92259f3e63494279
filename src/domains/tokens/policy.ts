import { type Ability, abilitiesBeyondRole, effectiveAbilities } from "../../platform/auth/abilities";
import { ALLOWED, type Decision, forbidden } from "../../platform/auth/policy";
import type { Principal } from "../../platform/auth/principal";

/**
 * Who may do what with API tokens. The route's ability (`tokens:read`, `tokens:write`) is declared
 * on the route; this holds the rest.
 */

/**
 * Which tokens a principal manages: an institution admin every token of its institution, everybody
 * else their own. A token outside this scope answers 404, as if it did not exist.
 */
export function manageableTokens(principal: Principal): { owner: "institution_id" | "user_id"; id: string } {
  return principal.user.role === "institution_admin" && principal.institution
    ? { owner: "institution_id", id: principal.institution.id }
    : { owner: "user_id", id: principal.user.id };
}

/**
 * A new token may hold only abilities its owner's role allows, and never more than the token that
 * creates it, so a narrowly scoped token cannot mint a broader one.
 */
export function mayGrant(principal: Principal, abilities: readonly string[]): Decision {
  const role = principal.user.role;
  const beyondRole = abilitiesBeyondRole(abilities, role);
  if (beyondRole.length > 0)
    return forbidden(`The ${role} role cannot hold ${beyondRole.map((a) => `\`${a}\``).join(", ")}.`);
  const granted: Ability[] = effectiveAbilities(abilities, role);
  const beyondToken = granted.filter((a) => !principal.token.abilities.includes(a));
  if (beyondToken.length > 0)
    return forbidden(
      `This token cannot grant ${beyondToken.map((a) => `\`${a}\``).join(", ")}, which it does not hold itself.`,
    );
  return ALLOWED;
}
