import { ApiError } from "../errors";
import type { Ability } from "./abilities";
import type { Principal } from "./principal";

/**
 * What a domain's `policy.ts` answers to "may this principal do this to this resource": allowed, or
 * refused for one of three reasons. Each domain keeps its role and ownership rules in its
 * `policy.ts`, as pure functions of the principal and the resource; a route asks once, through
 * `enforce`, and never checks a role itself. The ability a route needs is declared on the route
 * (`tokenRoute(ability, …)`) and is the one its OpenAPI operation documents.
 */
export type Decision =
  | { allowed: true }
  | { allowed: false; reason: "missing_ability"; ability: Ability }
  | { allowed: false; reason: "forbidden"; detail: string }
  /** The resource is not the principal's to see: answered as if it did not exist. */
  | { allowed: false; reason: "not_found"; detail: string };

export const ALLOWED: Decision = { allowed: true };

export const forbidden = (detail: string): Decision => ({ allowed: false, reason: "forbidden", detail });
export const notFound = (detail: string): Decision => ({ allowed: false, reason: "not_found", detail });

/** Allowed only if the token holds `ability` (for rules that need a second ability besides the route's). */
export function holdsAbility(principal: Principal, ability: Ability): Decision {
  return principal.token.abilities.includes(ability)
    ? ALLOWED
    : { allowed: false, reason: "missing_ability", ability };
}

/** The first refusal among `decisions`, or allowed. */
export function allOf(...decisions: Decision[]): Decision {
  return decisions.find((decision) => !decision.allowed) ?? ALLOWED;
}

/** Throws the problem a refusal answers: 403 `missing_ability`, 403 `forbidden` or 404 `not_found`. */
export function enforce(decision: Decision): void {
  if (decision.allowed) return;
  switch (decision.reason) {
    case "missing_ability":
      throw new ApiError("missing_ability", `This token lacks the \`${decision.ability}\` ability.`);
    case "forbidden":
      throw new ApiError("forbidden", decision.detail);
    case "not_found":
      throw new ApiError("not_found", decision.detail);
  }
}
