import { and, eq } from "drizzle-orm";
import { directoryKeys, institutionDatabases } from "../../db/schema";
import { BoundedMap } from "../bounded-map";
import { nowIso } from "../ids";
import { type ServiceContext, useDatabase } from "./context";
import { type DatabaseBinding, databaseBindings, FIRST_DATABASE, isDatabaseBindingName } from "./databases";

/**
 * The directory of which database each institution lives in, and of the keys that find an
 * institution before anything names it (docs/design/multi-database.md). Both live in `DB`, read and
 * written through `ctx.home`.
 */

export interface Placement {
  binding: DatabaseBinding;
  epoch: number;
  state: "active" | "moving";
}

const IN_FIRST: Placement = { binding: FIRST_DATABASE, epoch: 0, state: "active" };

/**
 * How long an isolate trusts a placement it read: a move waits this long between stopping an
 * institution's writes and its last copy, so that no isolate still writes to the old database
 * (design/multi-database.md#moving).
 */
export const PLACEMENT_TTL_MS = 5_000;
const placements = new BoundedMap<string, { placement: Placement; readAt: number }>(10_000);

/** Where `institutionId` lives: its directory entry, or `DB` without one. */
export async function placementOf(ctx: ServiceContext, institutionId: string): Promise<Placement> {
  const cached = placements.get(institutionId);
  const now = Date.now();
  if (cached && now - cached.readAt < PLACEMENT_TTL_MS) return cached.placement;
  const row = await ctx.home.db
    .select({
      binding: institutionDatabases.binding,
      epoch: institutionDatabases.epoch,
      state: institutionDatabases.state,
    })
    .from(institutionDatabases)
    .where(eq(institutionDatabases.institutionId, institutionId))
    .get();
  const placement = row && isDatabaseBindingName(row.binding) ? (row as Placement) : IN_FIRST;
  placements.set(institutionId, { placement, readAt: now });
  return placement;
}

/** Forgets this isolate's copy of a placement (after writing it). */
export function forgetPlacement(institutionId: string): void {
  placements.delete(institutionId);
}

/** Moves the invocation to the database `institutionId` lives in. */
export async function useInstitutionDatabase(ctx: ServiceContext, institutionId: string): Promise<Placement> {
  const placement = await placementOf(ctx, institutionId);
  useDatabase(ctx, placement.binding);
  return placement;
}

/**
 * Places a new institution (before anything of it is written): on `binding`, which must be one of
 * this deployment's databases. `DB` needs no entry; writing one anyway is harmless.
 */
export async function placeInstitution(
  ctx: ServiceContext,
  institutionId: string,
  binding: DatabaseBinding,
): Promise<void> {
  if (!databaseBindings(ctx.env).includes(binding)) throw new Error(`no database bound as ${binding}`);
  await ctx.home.db
    .insert(institutionDatabases)
    .values({ institutionId, binding, updatedAt: nowIso(ctx.now()) })
    .onConflictDoNothing()
    .run();
  forgetPlacement(institutionId);
}

export type DirectoryKind = (typeof directoryKeys.kind.enumValues)[number];

/**
 * Claims `key` for `institutionId` across every database, before the row it finds is written in the
 * institution's database. True when the key is the institution's (claimed now or before, so a
 * retried write claims again harmlessly); false when another institution holds it.
 */
export async function claimDirectoryKey(
  ctx: ServiceContext,
  kind: DirectoryKind,
  key: string,
  institutionId: string,
): Promise<boolean> {
  await ctx.home.db.insert(directoryKeys).values({ kind, key, institutionId }).onConflictDoNothing().run();
  return (await institutionOfKey(ctx, kind, key)) === institutionId;
}

/** The institution a key was claimed for, or null (then, if anywhere, its row is in `DB`). */
export async function institutionOfKey(
  ctx: Pick<ServiceContext, "home">,
  kind: DirectoryKind,
  key: string,
): Promise<string | null> {
  const row = await ctx.home.db
    .select({ institutionId: directoryKeys.institutionId })
    .from(directoryKeys)
    .where(and(eq(directoryKeys.kind, kind), eq(directoryKeys.key, key)))
    .get();
  return row?.institutionId ?? null;
}

/** Releases a key once its row is gone from the institution's database. */
export async function releaseDirectoryKey(
  ctx: ServiceContext,
  kind: DirectoryKind,
  key: string,
): Promise<void> {
  await ctx.home.db
    .delete(directoryKeys)
    .where(and(eq(directoryKeys.kind, kind), eq(directoryKeys.key, key)))
    .run();
}
