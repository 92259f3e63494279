import type { Plan, Role, TokenKind } from "../../db/schema";
import { ApiError } from "../errors";
import type { DatabaseBinding } from "../service/databases";
import type { Ability } from "./abilities";

/** Requests per rolling minute by plan; Enterprise institutions carry their own number. */
export const PLAN_RATE_LIMITS: Record<Plan, number> = { free: 100, pro: 1_000, enterprise: 1_000 };
export const PLATFORM_RATE_LIMIT = 10_000;

/**
 * Requests per rolling minute for all of an institution's tokens together, so that minting tokens
 * cannot multiply a plan; Enterprise gets five times its own per-token limit.
 */
export const PLAN_INSTITUTION_BUDGETS: Record<Exclude<Plan, "enterprise">, number> = {
  free: 300,
  pro: 5_000,
};
export const ENTERPRISE_BUDGET_FACTOR = 5;
/**
 * No user, all their tokens and sessions together, takes more than this share of the institution's
 * budget in a window, so that one member cannot starve the others and the admins' integrations. Half
 * is still more than one token's own limit on every plan (150 of Free's 300 against 100 per token).
 */
export const USER_SHARE_OF_BUDGET = 0.5;

/** Who is calling, resolved from the bearer token; cached inside the token's Durable Object. */
export interface Principal {
  token: {
    id: string;
    kind: TokenKind;
    name: string;
    /** What this request may do: the token's abilities, `*` expanded and cut to the owner's role. */
    abilities: Ability[];
    /**
     * What the token was granted, as stored (`*` kept): `GET /api/auth/me` shows it as the token
     * list does.
     */
    granted: string[];
    expiresAt: string | null;
  };
  user: { id: string; email: string; name: string; role: Role; timeZone: string };
  institution: { id: string; slug: string; name: string; plan: Plan } | null;
  rateLimitPerMinute: number;
  /**
   * The database the user's institution lives in (design/multi-database.md): the request runs there.
   * Missing in a principal a token's object cached before databases were several: `DB`.
   */
  database?: DatabaseBinding;
}

export function rateLimitFor(
  role: Role,
  institution: { plan: Plan; rateLimitPerMinute: number | null } | null,
): number {
  if (role === "platform_admin" || !institution) return PLATFORM_RATE_LIMIT;
  if (institution.plan === "enterprise" && institution.rateLimitPerMinute)
    return institution.rateLimitPerMinute;
  return PLAN_RATE_LIMITS[institution.plan];
}

/** The institution-wide budget that applies to a principal, and its user's share of it. */
export interface InstitutionBudgetRule {
  institutionId: string;
  /** All the institution's tokens together, per window. */
  limit: number;
  userId: string;
  /** All of this user's tokens together, per window: USER_SHARE_OF_BUDGET of `limit`. */
  userLimit: number;
}

/** The institution-wide budget that applies to a principal; null for platform staff (exempt). */
export function institutionBudgetFor(principal: Principal): InstitutionBudgetRule | null {
  const { institution, user } = principal;
  if (!institution || user.role === "platform_admin") return null;
  const limit =
    institution.plan === "enterprise"
      ? ENTERPRISE_BUDGET_FACTOR * principal.rateLimitPerMinute
      : PLAN_INSTITUTION_BUDGETS[institution.plan];
  const userLimit = Math.max(1, Math.floor(limit * USER_SHARE_OF_BUDGET));
  return { institutionId: institution.id, limit, userId: user.id, userLimit };
}

/**
 * The institution that owns the integration resources (webhooks, exports, …) a caller manages.
 * Platform staff belong to none, so they have none to manage.
 */
export function requireInstitution(principal: Principal): NonNullable<Principal["institution"]> {
  if (!principal.institution) {
    throw new ApiError(
      "forbidden",
      "This resource belongs to an institution, and this account belongs to none; use a token of an institution admin.",
    );
  }
  return principal.institution;
}
