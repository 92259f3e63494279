import { and, eq, sql } from "drizzle-orm";
import { directoryKeys, institutionDatabases } from "../../db/schema";
import { BoundedMap } from "../bounded-map";
import { ApiError } from "../errors";
import { everyDatabase, type ServiceContext, useDatabase } from "./context";
import { type DatabaseBinding, FIRST_DATABASE, isDatabaseBindingName } from "./databases";

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
async function placementOf(ctx: ServiceContext, institutionId: string): Promise<Placement> {
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

/**
 * Drops this isolate's copy of the institution's placement (a move changed it: the move's own
 * isolate reads the new one at once; every other within `PLACEMENT_TTL_MS`).
 */
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
 * Moves the invocation to the database `institutionId` lives in for a write, refused with `503
 * institution_moving` (and `Retry-After`) while a move switches the institution over. Every way a
 * write reaches an institution goes through here: a token's non-GET request (`authenticate`), and the
 * entry points without one (SCIM, SSO, LTI, Stripe's webhook, sign-in, invitations) once they know
 * the institution (design/multi-database.md#writes-during-the-switch). The placement is this
 * isolate's copy, at most `PLACEMENT_TTL_MS` old: the move waits that long before its last copy.
 */
export async function enterInstitutionToWrite(ctx: ServiceContext, institutionId: string): Promise<void> {
  const placement = await useInstitutionDatabase(ctx, institutionId);
  if (placement.state === "moving")
    throw new ApiError(
      "institution_moving",
      "The institution is being moved to another database; its writes resume in a few seconds.",
      { headers: { "Retry-After": "1" } },
    );
}

export type DirectoryKind = (typeof directoryKeys.kind.enumValues)[number];

/**
 * The claim itself: `made` when this call wrote the key, `held` when it was the institution's
 * already, `taken` when another institution holds it. An e-mail is also taken by a user of `DB`
 * itself (which has no key: the claim and that check are one statement). A key another institution
 * holds without the row it promises (its writer failed after the claim) is taken over.
 */
async function claimKey(
  ctx: ServiceContext,
  kind: DirectoryKind,
  key: string,
  institutionId: string,
): Promise<"made" | "held" | "taken"> {
  const inserted = await ctx.home.d1
    .prepare(
      `INSERT INTO directory_keys (kind, key, institution_id) SELECT ?1, ?2, ?3
        WHERE ?1 <> 'email' OR NOT EXISTS (SELECT 1 FROM users WHERE email = ?2)
        ON CONFLICT (kind, key) DO NOTHING`,
    )
    .bind(kind, key, institutionId)
    .run();
  if ((inserted.meta.changes ?? 0) > 0) return "made";
  const holder = await institutionOfKey(ctx, kind, key);
  if (holder === institutionId) return "held";
  if (holder === null || kind !== "email" || (await emailLivesIn(ctx, holder, key))) return "taken";
  const taken = await ctx.home.db
    .update(directoryKeys)
    .set({ institutionId, createdAt: sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))` })
    .where(
      and(eq(directoryKeys.kind, kind), eq(directoryKeys.key, key), eq(directoryKeys.institutionId, holder)),
    )
    .run();
  return (taken.meta.changes ?? 0) > 0 ? "made" : "taken";
}

/** Whether a user with this e-mail exists in the database `institutionId` lives in. */
async function emailLivesIn(ctx: ServiceContext, institutionId: string, email: string): Promise<boolean> {
  const { binding } = await placementOf(ctx, institutionId);
  const there = everyDatabase(ctx).find((db) => db.name === binding);
  const row = await there?.d1.prepare("SELECT 1 AS found FROM users WHERE email = ?1").bind(email).first();
  return Boolean(row);
}

/** A key a write must hold in every database before it commits (commit's `claims`). */
export interface DirectoryClaim {
  kind: DirectoryKind;
  key: string;
  institutionId: string;
  /** The unique constraint the key extends across databases, named as SQLite names it: `users.email`. */
  constraint: string;
}

/** Re-dates the keys of a claim (`json_each` of kind, key, institutionId) that their institution holds. */
const TOUCH_KEYS = `UPDATE directory_keys SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  WHERE (kind, key, institution_id) IN
    (SELECT value->>'kind', value->>'key', value->>'institutionId' FROM json_each(?1))`;

/**
 * Claims every key for a write about to commit in a database other than `DB` (in `DB`, the
 * triggers of migration 0045 refuse a key claimed elsewhere). Throws, as SQLite would for the
 * constraint, when one is taken, releasing the keys this call made before it.
 */
export async function claimAll(ctx: ServiceContext, claims: readonly DirectoryClaim[]): Promise<void> {
  if (ctx.database === FIRST_DATABASE || claims.length === 0) return;
  // Two round trips however many keys (a bulk upload's): claim them all, then read who holds each.
  const json = JSON.stringify(claims.map(({ kind, key, institutionId }) => ({ kind, key, institutionId })));
  const [inserted, , holders] = await ctx.home.d1.batch<{
    key: string;
    kind: string;
    institution_id: string;
  }>([
    ctx.home.d1
      .prepare(
        `INSERT INTO directory_keys (kind, key, institution_id)
          SELECT value->>'kind', value->>'key', value->>'institutionId' FROM json_each(?1)
          WHERE value->>'kind' <> 'email' OR NOT EXISTS (SELECT 1 FROM users WHERE email = value->>'key')
          ON CONFLICT (kind, key) DO NOTHING RETURNING kind, key, institution_id`,
      )
      .bind(json),
    // A key this institution held already is claimed afresh: the orphan-key sweep spares it.
    ctx.home.d1.prepare(TOUCH_KEYS).bind(json),
    ctx.home.d1
      .prepare(
        `SELECT d.kind, d.key, d.institution_id FROM json_each(?1) j
          JOIN directory_keys d ON d.kind = j.value->>'kind' AND d.key = j.value->>'key'`,
      )
      .bind(json),
  ]);
  const made = new Set((inserted?.results ?? []).map((row) => `${row.kind} ${row.key}`));
  const holder = new Map(
    (holders?.results ?? []).map((row) => [`${row.kind} ${row.key}`, row.institution_id]),
  );
  for (const claim of claims) {
    const id = `${claim.kind} ${claim.key}`;
    if (made.has(id) || holder.get(id) === claim.institutionId) continue;
    // Not ours: a user of DB has the address, another institution holds it, or it is an orphan.
    if ((await claimKey(ctx, claim.kind, claim.key, claim.institutionId)) !== "taken") continue;
    for (const earlier of claims)
      if (made.has(`${earlier.kind} ${earlier.key}`))
        await releaseDirectoryKey(ctx, earlier.kind, earlier.key);
    throw new Error(`UNIQUE constraint failed: ${claim.constraint}`);
  }
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
async function releaseDirectoryKey(ctx: ServiceContext, kind: DirectoryKind, key: string): Promise<void> {
  await ctx.home.db
    .delete(directoryKeys)
    .where(and(eq(directoryKeys.kind, kind), eq(directoryKeys.key, key)))
    .run();
}

/** The claims of users' e-mail addresses for an institution: unique across every database. */
export function emailClaims(institutionId: string, emails: readonly string[]): DirectoryClaim[] {
  return emails.map((key) => ({ kind: "email", key, institutionId, constraint: "users.email" }));
}

/**
 * The entry points that find an institution by a key before anything names it (a SCIM token's hash,
 * a Stripe customer, an SSO domain, an LTI client: design/multi-database.md#entry-points). `read`
 * looks in `DB` first; when `DB` has nothing, the key's directory entry names the institution, the
 * invocation moves to its database and `read` looks again there. Null when neither has it.
 */
export async function findByDirectoryKey<T>(
  ctx: ServiceContext,
  kind: DirectoryKind,
  key: string,
  read: () => Promise<T | null | undefined>,
): Promise<T | null> {
  const here = await read();
  if (here !== null && here !== undefined) return here;
  if (ctx.database !== FIRST_DATABASE) return null;
  const institutionId = await institutionOfKey(ctx, kind, key);
  if (!institutionId) return null;
  await useInstitutionDatabase(ctx, institutionId);
  if (ctx.database === FIRST_DATABASE) return null;
  return (await read()) ?? null;
}

/** One key of `kind` for a row written in the institution's database (commit's `claims`). */
export function directoryClaim(
  kind: DirectoryKind,
  key: string,
  institutionId: string,
  constraint: string,
): DirectoryClaim {
  return { kind, key, institutionId, constraint };
}

/**
 * Releases the key of a row the invocation removed (or retired: a revoked SCIM token) in a
 * database other than `DB`; in `DB` there is no key. Only the institution's own key is released.
 */
export async function releaseKey(
  ctx: ServiceContext,
  kind: DirectoryKind,
  key: string,
  institutionId: string,
): Promise<void> {
  if (ctx.database === FIRST_DATABASE) return;
  await ctx.home.db
    .delete(directoryKeys)
    .where(
      and(
        eq(directoryKeys.kind, kind),
        eq(directoryKeys.key, key),
        eq(directoryKeys.institutionId, institutionId),
      ),
    )
    .run();
}

/**
 * The database `institutionId` lives in, for a read there that must not move the invocation (a
 * check made before the invocation knows where it carries on: enforced SSO at password sign-in).
 */
export async function institutionDatabase(
  ctx: ServiceContext,
  institutionId: string,
): Promise<{ db: ServiceContext["db"]; d1: D1Database }> {
  const { binding } = await placementOf(ctx, institutionId);
  const there = everyDatabase(ctx).find((db) => db.name === binding);
  if (!there) throw new Error(`no D1 database bound as ${binding}`);
  return there;
}
