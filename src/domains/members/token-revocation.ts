import { and, eq, inArray, isNull } from "drizzle-orm";
import { apiTokens } from "../../db/schema";
import type { Database } from "../../platform/db";
import type { ServiceContext } from "../../platform/service/context";

/** Revokes every live token (sessions included) of these users, as part of a batch. */
export function revokeTokensOf(db: Database, userIds: string[], now: string) {
  return db
    .update(apiTokens)
    .set({ revokedAt: now })
    .where(and(inArray(apiTokens.userId, userIds), isNull(apiTokens.revokedAt)));
}

/** The hashes of the tokens revoked at `now` by `revokeTokensOf`, to push the revocation to their gates. */
export async function tokensRevokedAt(db: Database, userIds: string[], now: string): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .select({ tokenHash: apiTokens.tokenHash })
    .from(apiTokens)
    .where(and(inArray(apiTokens.userId, userIds), eq(apiTokens.revokedAt, now)))
    .all();
  return rows.map((r) => r.tokenHash);
}

const PARALLEL = 50;

/**
 * Tokens just revoked in D1 (in the batch that suspended or removed their members, at `at`): their
 * gates are told too, so the very next request with one is 401 rather than served from a cached
 * principal.
 */
export async function pushRevocations(
  ctx: ServiceContext,
  input: { userIds: string[]; at: string },
): Promise<void> {
  const tokenHashes = await tokensRevokedAt(ctx.db, input.userIds, input.at);
  const gates = ctx.env.TOKEN_GATE;
  for (let start = 0; start < tokenHashes.length; start += PARALLEL) {
    await Promise.all(
      tokenHashes.slice(start, start + PARALLEL).map(async (hash) => {
        const gate = gates.get(gates.idFromName(hash));
        // One retry: a gate that missed it would serve its cache until its next refresh.
        await gate.revoke().catch(() => gate.revoke());
      }),
    );
  }
}
