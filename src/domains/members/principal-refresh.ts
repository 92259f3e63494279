import { invalidatePrincipals } from "../../platform/auth/invalidate";
import type { ServiceContext } from "../../platform/service/context";

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
