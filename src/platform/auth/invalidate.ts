import type { Env } from "../../env";
import { nowIso } from "../ids";
import { clockNow } from "../service/clock";
import { type DatabaseBinding, databaseBinding } from "../service/databases";

/** Whose cached principals to drop: one token, every token of a user, or of an institution's members. */
export type PrincipalScope = { tokenId: string } | { userId: string } | { institutionId: string };

/** Gates told at once; the rest wait for a slot, so a large institution does not open thousands of calls. */
const PARALLEL_GATES = 50;

// Live tokens only: a revoked gate never comes back, an expired one refuses whatever it holds.
const LIVE = "t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)";
const TOKENS_OF = {
  tokenId: `SELECT t.token_hash FROM api_tokens t WHERE t.id = ?1 AND ${LIVE}`,
  userId: `SELECT t.token_hash FROM api_tokens t WHERE t.user_id = ?1 AND ${LIVE}`,
  // The token's institution and its user's current one: a member moved or removed keeps neither.
  institutionId: `SELECT t.token_hash FROM api_tokens t JOIN users u ON u.id = t.user_id
    WHERE (t.institution_id = ?1 OR u.institution_id = ?1) AND ${LIVE}`,
} as const;

/**
 * Tells the gate of every live token in `scope` to drop its cached principal, so that the next
 * request with it re-reads role, abilities, plan, rate limit and institution from D1 before it is
 * answered. Call it after the change is written to D1 (a role change, a suspension or removal of a
 * member, a plan or limit change); without it the change reaches a busy token within 60 seconds.
 * Revocation is not this: use the tokens domain's revocation, which refuses the next request.
 * Returns how many gates were told.
 */
export async function invalidatePrincipals(
  ctx: { env: Env; database: DatabaseBinding },
  scope: PrincipalScope,
): Promise<number> {
  const { env } = ctx;
  const [key, id] = Object.entries(scope)[0] as [keyof typeof TOKENS_OF, string];
  // At the primary of the database the change was written to: it decides whose tokens are live.
  const { results } = await databaseBinding(env, ctx.database)
    .withSession("first-primary")
    .prepare(TOKENS_OF[key])
    .bind(id, nowIso(clockNow()))
    .all<{ token_hash: string }>();
  const hashes = results.map((r) => r.token_hash);
  for (let start = 0; start < hashes.length; start += PARALLEL_GATES) {
    await Promise.all(
      hashes
        .slice(start, start + PARALLEL_GATES)
        .map((hash) => env.TOKEN_GATE.get(env.TOKEN_GATE.idFromName(hash)).invalidate()),
    );
  }
  return hashes.length;
}
