import { eq } from "drizzle-orm";
import { directoryKeys, institutionDatabases } from "../../db/schema";
import { nowIso } from "../ids";
import { everyDatabase, type ServiceContext } from "./context";
import { type DatabaseBinding, databaseBindings, FIRST_DATABASE } from "./databases";

/**
 * Where a new institution lives (docs/design/multi-database.md#placing-a-new-institution): the
 * database platform staff name, or the least full one. "Full" is the size D1 reports for the
 * database (`meta.size_after` of any statement: its pages in bytes, the same figure as the
 * dashboard's and the 10 GB limit's), read from every database in parallel when an institution is
 * created; ties go to the lowest binding (`DB`, then `DB_1`, …).
 */

/** The size in bytes D1 reports for each database of the deployment, `DB` first. */
export async function databaseSizes(
  ctx: ServiceContext,
): Promise<{ binding: DatabaseBinding; bytes: number }[]> {
  return Promise.all(
    everyDatabase(ctx).map(async ({ name, d1 }) => {
      const result = await d1.prepare("SELECT 1").run();
      return { binding: name, bytes: Number(result.meta.size_after ?? 0) };
    }),
  );
}

/** The least full database (by `databaseSizes`; the first of equals). */
export async function leastFullDatabase(ctx: ServiceContext): Promise<DatabaseBinding> {
  const sizes = await databaseSizes(ctx);
  let least = sizes[0];
  for (const size of sizes) if (least === undefined || size.bytes < least.bytes) least = size;
  return least?.binding ?? FIRST_DATABASE;
}

/** Whether `name` is one of this deployment's databases. */
export function isBoundDatabase(ctx: ServiceContext, name: string): name is DatabaseBinding {
  return (databaseBindings(ctx.env) as string[]).includes(name);
}

/**
 * Writes a new institution's directory entry in `DB`, before anything of it is written in its
 * database. `DB` needs none (no entry means `DB`). Idempotent.
 */
export async function placeInstitution(
  ctx: ServiceContext,
  institutionId: string,
  binding: DatabaseBinding,
): Promise<void> {
  if (binding === FIRST_DATABASE) return;
  await ctx.home.db
    .insert(institutionDatabases)
    .values({ institutionId, binding, updatedAt: nowIso(ctx.now()) })
    .onConflictDoNothing()
    .run();
}

/**
 * Undoes `placeInstitution` and the keys claimed for the institution (its slug, its first admin's
 * e-mail) after its creation was refused (slug or e-mail taken): its batch was not written, so nothing
 * of it exists. A crash before this leaves an entry and keys naming an institution that does not
 * exist: the entry is never read (nobody knows the id), the keys are removed by the orphan-key sweep
 * (orphan-keys.ts) once past its grace period.
 */
export async function unplaceInstitution(ctx: ServiceContext, institutionId: string): Promise<void> {
  await ctx.home.db.batch([
    ctx.home.db.delete(institutionDatabases).where(eq(institutionDatabases.institutionId, institutionId)),
    ctx.home.db.delete(directoryKeys).where(eq(directoryKeys.institutionId, institutionId)),
  ]);
}
