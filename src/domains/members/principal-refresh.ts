import type { Env } from "../../env";
import { invalidatePrincipals } from "../../platform/auth/invalidate";

/**
 * Role, plan or limit changed: every live token of the user (or of the institution) re-reads its
 * principal from D1 on its next request (the platform's invalidation of the token gates' caches).
 */
export async function refreshPrincipals(
  env: Env,
  scope: { userId: string } | { institutionId: string },
): Promise<void> {
  await invalidatePrincipals(env, scope);
}

const PARALLEL = 50;

/**
 * Tokens just revoked in D1 (in the batch that suspended or removed their member): their gates are
 * told too, so the very next request with one is 401 rather than served from a cached principal.
 */
export async function revokeGates(env: Env, tokenHashes: readonly string[]): Promise<void> {
  for (let start = 0; start < tokenHashes.length; start += PARALLEL) {
    await Promise.all(
      tokenHashes.slice(start, start + PARALLEL).map(async (hash) => {
        const gate = env.TOKEN_GATE.get(env.TOKEN_GATE.idFromName(hash));
        // One retry: a gate that missed it would serve its cache until its next refresh.
        await gate.revoke().catch(() => gate.revoke());
      }),
    );
  }
}
