import { and, eq, gt, isNull, or } from "drizzle-orm";
import { apiTokens } from "../../db/schema";
import type { Env } from "../../env";
import { database } from "../../platform/db";
import { nowIso } from "../../platform/ids";

/**
 * The one place this domain tells the token gate that what it caches is stale. `refresh`: the next
 * request of every live token of the user (or of the institution) re-reads its principal from D1
 * (a role, plan or limit change); `revoked`: tokens just revoked in D1 answer 401 on the next request.
 */
export async function refreshPrincipals(
  env: Env,
  scope: { userId: string } | { institutionId: string },
): Promise<void> {
  const db = database(env.DB);
  const owner =
    "userId" in scope ? eq(apiTokens.userId, scope.userId) : eq(apiTokens.institutionId, scope.institutionId);
  const rows = await db
    .select({ tokenHash: apiTokens.tokenHash })
    .from(apiTokens)
    .where(
      and(
        owner,
        isNull(apiTokens.revokedAt),
        or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, nowIso())),
      ),
    )
    .all();
  await forEachGate(
    env,
    rows.map((r) => r.tokenHash),
    (gate) => gate.invalidate(),
  );
}

/** Pushes revocations (already written to D1) to the tokens' gates, so their next request is 401. */
export async function revokeGates(env: Env, tokenHashes: readonly string[]): Promise<void> {
  await forEachGate(env, tokenHashes, (gate) => gate.revoke());
}

const PARALLEL = 20;

async function forEachGate(
  env: Env,
  tokenHashes: readonly string[],
  act: (gate: DurableObjectStub<import("../../platform/auth/token-gate").TokenGate>) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < tokenHashes.length; start += PARALLEL) {
    await Promise.all(
      tokenHashes.slice(start, start + PARALLEL).map(async (hash) => {
        const gate = env.TOKEN_GATE.get(env.TOKEN_GATE.idFromName(hash));
        // One retry: a gate that missed the message would serve its cache for up to a minute.
        await act(gate).catch(() => act(gate));
      }),
    );
  }
}
