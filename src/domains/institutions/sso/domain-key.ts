import { and, eq, ne, type SQL } from "drizzle-orm";
import { directoryKeys, ssoDomains } from "../../../db/schema";
import type { Database } from "../../../platform/db";
import { nowIso } from "../../../platform/ids";
import { everyDatabase, type ServiceContext } from "../../../platform/service/context";
import { FIRST_DATABASE } from "../../../platform/service/databases";
import { institutionOfKey } from "../../../platform/service/directory";

/**
 * An SSO domain verified by an institution outside `DB` is found by its `sso_domain` directory key
 * (design/multi-database.md#entry-points). Within one database the latest proof of control wins:
 * verifying a domain sets whichever other institution held it verified back to pending (the partial
 * unique index). Across databases the same holds: the key names the latest verifier, and the
 * earlier holder's row, wherever it lives, is set back to pending. An institution in `DB` has no key:
 * sign-in looks in `DB` first.
 *
 * In that order: `beforeVerify` points the key at the verifier (in `DB`, before the verification is
 * written elsewhere, as every key); `afterVerify` sets every other holder back once the verification
 * is written, or puts the key back when it was not (`verified: false`).
 */
/**
 * Sets back to pending whichever other institution holds `domain` verified in `db` (`also`: a
 * further condition, as the verification's own batch adds that its proof still stands).
 */
export function demoteOtherHolders(
  db: Database,
  input: { domain: string; institutionId: string; now: string },
  also?: SQL,
) {
  return db
    .update(ssoDomains)
    .set({ status: "pending", method: null, verifiedAt: null, updatedAt: input.now })
    .where(
      and(
        eq(ssoDomains.domain, input.domain),
        eq(ssoDomains.status, "verified"),
        ne(ssoDomains.institutionId, input.institutionId),
        also,
      ),
    );
}

export interface DomainHandover {
  /** Who held the key before (null: nobody, or an institution of the first database, which has none). */
  previous: string | null;
}

export async function beforeVerify(
  ctx: ServiceContext,
  input: { institutionId: string; domain: string },
): Promise<DomainHandover> {
  const previous = await institutionOfKey(ctx, "sso_domain", input.domain);
  if (ctx.database !== FIRST_DATABASE && previous !== input.institutionId)
    await ctx.home.db
      .insert(directoryKeys)
      .values({ kind: "sso_domain", key: input.domain, institutionId: input.institutionId })
      .onConflictDoUpdate({
        target: [directoryKeys.kind, directoryKeys.key],
        set: { institutionId: input.institutionId },
      })
      .run();
  return { previous };
}

export async function afterVerify(
  ctx: ServiceContext,
  input: { institutionId: string; domain: string; verified: boolean },
  handover: DomainHandover,
): Promise<void> {
  const { institutionId, domain } = input;
  const { previous } = handover;
  const key = and(eq(directoryKeys.kind, "sso_domain"), eq(directoryKeys.key, domain));
  if (!input.verified) {
    // Nothing was verified: the key goes back to whoever held it (or away, if it was this call's).
    if (ctx.database === FIRST_DATABASE || previous === institutionId) return;
    const mine = and(key, eq(directoryKeys.institutionId, institutionId));
    if (previous) await ctx.home.db.update(directoryKeys).set({ institutionId: previous }).where(mine).run();
    else await ctx.home.db.delete(directoryKeys).where(mine).run();
    return;
  }
  // Verified in DB: no key routes the domain elsewhere any more.
  if (ctx.database === FIRST_DATABASE && previous)
    await ctx.home.db
      .delete(directoryKeys)
      .where(and(key, eq(directoryKeys.institutionId, previous)))
      .run();
  // Every other database's verified holder goes back to pending (this one's did, in the verification's batch).
  const now = nowIso(ctx.now());
  await Promise.all(
    everyDatabase(ctx)
      .filter((db) => db.name !== ctx.database)
      .map((db) => demoteOtherHolders(db.db, { domain, institutionId, now }).run()),
  );
}
