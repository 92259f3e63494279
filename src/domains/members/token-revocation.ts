import { and, eq, inArray, isNull } from "drizzle-orm";
import { apiTokens } from "../../db/schema";
import type { Database } from "../../platform/db";

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
