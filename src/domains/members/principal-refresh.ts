import { invalidatePrincipals } from "../../platform/auth/invalidate";
import type { ServiceContext } from "../../platform/service/context";
import type { MemberChanges } from "./events";
import { pushRevocations } from "./token-revocation";

/**
 * Role, plan or limit changed: every live token of the user (or of the institution) re-reads its
 * principal from D1 on its next request (the platform's invalidation of the token gates' caches).
 * Part of members' face: institutions calls it when an institution's plan or limit changes.
 */
export async function refreshPrincipals(
  ctx: ServiceContext,
  scope: { userId: string } | { institutionId: string },
): Promise<void> {
  await invalidatePrincipals(ctx, scope);
}

/** A member's fields that a token's cached principal carries or depends on (platform/auth/principal.ts). */
const CARRIED_BY_PRINCIPAL = ["email", "name", "role", "status"] as const;

/** Whether a member's change alters what its tokens' principals carry. */
export function changesPrincipal(changes: MemberChanges): boolean {
  return CARRIED_BY_PRINCIPAL.some((field) => changes[field] !== undefined);
}

/**
 * After a member's change is committed (at `at`), whichever door it came through: a suspension's
 * revoked tokens are pushed to their gates (the next request with one is 401); any other change of
 * what a principal carries is re-read by every live token of the member before its next request
 * is answered.
 */
export async function settleMemberChange(
  ctx: ServiceContext,
  input: { userId: string; changes: MemberChanges; at: string },
): Promise<void> {
  const { userId, changes, at } = input;
  if (changes.status?.to === "suspended") await pushRevocations(ctx, { userIds: [userId], at });
  else if (changesPrincipal(changes)) await refreshPrincipals(ctx, { userId });
}
