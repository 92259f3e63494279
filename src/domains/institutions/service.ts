import { and, asc, desc, eq, notExists, type SQL } from "drizzle-orm";
import { type Branding, directoryKeys, institutions, type Plan } from "../../db/schema";
import { enforce } from "../../platform/auth/policy";
import { batchGuard, isBatchGuardFailure } from "../../platform/batch";
import type { Database } from "../../platform/db";
import { ApiError, validationError } from "../../platform/errors";
import type { OutboxRow } from "../../platform/events";
import { type PageRequest, pageWithTotal } from "../../platform/http/pagination";
import { mergeWindows, type PageCursor, type SortKey, windowFor } from "../../platform/http/spread-pages";
import { newId, nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import { everyDatabase, type PrincipalContext, useDatabase } from "../../platform/service/context";
import { type DatabaseBinding, databaseBindings, FIRST_DATABASE } from "../../platform/service/databases";
import { claimAll, emailClaims } from "../../platform/service/directory";
import {
  isBoundDatabase,
  leastFullDatabase,
  placeInstitution,
  unplaceInstitution,
} from "../../platform/service/placement";
import { invitationUrl, mintInvitation } from "../members/invitations";
import { newMemberChange } from "../members/new-member";
import { refreshPrincipals } from "../members/principal-refresh";
import { memberCount } from "../members/queries";
import { uniqueConflict } from "../members/rules";
import { findInstitution, type InstitutionRow, institutionInScope } from "./access";
import { mayCreateInstitution, mayUpdateInstitution, visibleInstitutions } from "./policy";
import { beyondInListOrder, MEMBER_COUNT, nameOrSlugContains, SORT_NAME } from "./sql";

/**
 * A page of the institutions the caller sees (`visibleInstitutions`), by name then id, with member
 * counts. Platform staff's list spans every database (design/multi-database.md#platform-wide-reads):
 * each reads its window (`windowFor`: after a link's cursor, one page and one row more) and its
 * count in one batch, in parallel; the pages merge by the same order and the totals add up.
 */
export async function listInstitutions(
  ctx: PrincipalContext,
  input: { page: PageRequest; cursor?: PageCursor | null; q?: string; plan?: Plan },
) {
  const conditions: SQL[] = [];
  const visible = visibleInstitutions(ctx.principal);
  if (!visible.all) conditions.push(eq(institutions.id, visible.id));
  if (input.plan) conditions.push(eq(institutions.plan, input.plan));
  if (input.q) conditions.push(nameOrSlugContains(input.q));
  const where = and(...conditions);
  const window = windowFor(input.page, input.cursor ?? null);
  const windowWhere =
    window.kind === "first" ? where : and(where, beyondInListOrder(window.kind, window.key));
  const order = window.kind === "before" ? desc : asc;
  // Anybody else's list is their own institution, in their own database.
  const databases = visible.all ? everyDatabase(ctx) : [ctx];
  const parts = await Promise.all(
    databases.map(({ db }) =>
      pageWithTotal(
        db,
        db
          .select({ institution: institutions, memberCount: MEMBER_COUNT, sortName: SORT_NAME })
          .from(institutions)
          .where(windowWhere)
          .orderBy(order(SORT_NAME), order(institutions.id))
          .limit(window.limit),
        institutions,
        where,
      ),
    ),
  );
  const merged = mergeWindows(
    parts.map((part) => part.rows),
    institutionListKey,
    input.page,
    window,
  );
  return { ...merged, total: parts.reduce((sum, part) => sum + part.total, 0) };
}

/** A listed institution's place in the list's order. */
export function institutionListKey(row: { sortName: string; institution: { id: string } }): SortKey {
  return [row.sortName, row.institution.id];
}

/** The institution the caller may act on, with its member count. */
export async function getInstitution(ctx: PrincipalContext, id: string) {
  const institution = await institutionInScope(ctx, id);
  return { institution, memberCount: await memberCount(ctx.db, id) };
}

/** A URL-safe slug from a name: ASCII letters and digits, hyphens between words. */
export function slugFrom(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/g, "");
  return slug || "institution";
}

function mergeBranding(current: Branding, patch: Branding | undefined): Branding {
  if (!patch) return current;
  const merged: Branding = { ...current };
  for (const [key, value] of Object.entries(patch) as [keyof Branding, string | null | undefined][]) {
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

function checkRateLimitPlan(plan: Plan, rateLimit: number | null | undefined): void {
  if (rateLimit != null && plan !== "enterprise") {
    throw validationError([{ path: "rate_limit_per_minute", message: "is only for the enterprise plan" }]);
  }
}

export interface CreateInstitutionInput {
  name: string;
  slug?: string;
  plan: Plan;
  rate_limit_per_minute?: number | null;
  seats?: number | null;
  branding?: Branding;
  locale?: string;
  time_zone?: string;
  admin?: { email: string; name: string };
  /** Platform staff's choice of database; the least full one when left out. */
  database?: string;
}

function slugConflict(error: unknown): ApiError | null {
  const text = String(error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : error);
  return /UNIQUE constraint failed: institutions\.slug/.test(text)
    ? new ApiError("slug_taken", "Another institution has this slug; choose another `slug`.")
    : null;
}

/** No institution of another database holds `slug` (its key in the directory): a condition in the first database. */
function slugFreeOfOtherDatabases(db: Database, slug: string): SQL {
  return notExists(
    db
      .select({ key: directoryKeys.key })
      .from(directoryKeys)
      .where(and(eq(directoryKeys.kind, "slug"), eq(directoryKeys.key, slug))),
  );
}

async function slugInFirstDatabase(db: Database, slug: string): Promise<boolean> {
  const row = await db
    .select({ id: institutions.id })
    .from(institutions)
    .where(eq(institutions.slug, slug))
    .get();
  return row !== undefined;
}

/** Platform staff create an institution, and with `admin` its first (invited) admin in the same batch. */
export async function createInstitution(
  ctx: PrincipalContext,
  { input, origin }: { input: CreateInstitutionInput; origin: string },
) {
  enforce(mayCreateInstitution(ctx.principal));
  checkRateLimitPlan(input.plan, input.rate_limit_per_minute);
  if (input.database !== undefined && !isBoundDatabase(ctx, input.database))
    throw validationError([
      {
        path: "database",
        message: `is not a database of this deployment (${databaseBindings(ctx.env).join(", ")})`,
      },
    ]);
  const id = newId("ins");
  const slug = input.slug ?? slugFrom(input.name);
  // Placed first (design/multi-database.md#placing-a-new-institution): its entry and slug key in the directory,
  // then the institution in its database.
  const database = input.database ?? (await leastFullDatabase(ctx));
  try {
    const created = await createPlacedInstitution(ctx, { id, slug, input, origin, database });
    return { ...created, database };
  } catch (error) {
    const refusal = slugConflict(error) ?? uniqueConflict(error);
    if (refusal && database !== FIRST_DATABASE) await unplaceInstitution(ctx, id);
    throw refusal ?? error;
  }
}

async function createPlacedInstitution(
  ctx: PrincipalContext,
  {
    id,
    slug,
    input,
    origin,
    database,
  }: { id: string; slug: string; input: CreateInstitutionInput; origin: string; database: DatabaseBinding },
) {
  const statements: Writable[] = [];
  if (database === FIRST_DATABASE) {
    // A slug held by an institution of another database (its key) is taken here too.
    statements.push(batchGuard(ctx.db, slugFreeOfOtherDatabases(ctx.db, slug)));
  } else {
    await placeInstitution(ctx, id, database);
    useDatabase(ctx, database);
    await claimAll(ctx, [{ kind: "slug", key: slug, institutionId: id, constraint: "institutions.slug" }]);
    // Claimed before this read: a creation in the first database after it sees the key (its guard), one before it is seen here.
    if (await slugInFirstDatabase(ctx.home.db, slug))
      throw new Error("UNIQUE constraint failed: institutions.slug");
  }
  const { db } = ctx;
  const now = nowIso(ctx.now());
  const row: InstitutionRow = {
    id,
    number: null, // allocated by the insert itself (a trigger)
    slug,
    name: input.name,
    plan: input.plan,
    rateLimitPerMinute: input.rate_limit_per_minute ?? null,
    seats: input.seats ?? null,
    branding: mergeBranding({}, input.branding),
    locale: input.locale ? (Intl.getCanonicalLocales(input.locale)[0] ?? input.locale) : "en",
    timeZone: input.time_zone ?? "UTC",
    createdAt: now,
    updatedAt: now,
  };
  statements.push(db.insert(institutions).values(row));
  const events: OutboxRow[] = [];
  let admin: { id: string; invitation: Awaited<ReturnType<typeof mintInvitation>> } | null = null;
  if (input.admin) {
    admin = { id: newId("usr"), invitation: await mintInvitation(ctx.now(), row.id) };
    const member = {
      id: admin.id,
      email: input.admin.email.trim().toLowerCase(),
      name: input.admin.name,
      role: "institution_admin" as const,
      externalId: null,
      groups: [],
    };
    const created = newMemberChange(db, { institutionId: row.id, member, invitation: admin.invitation, now });
    statements.push(...created.statements);
    events.push(created.event);
  }
  try {
    await commit(ctx, {
      statements,
      events,
      claims: input.admin ? emailClaims(id, [input.admin.email.trim().toLowerCase()]) : [],
    });
  } catch (error) {
    throw isBatchGuardFailure(error) ? new Error("UNIQUE constraint failed: institutions.slug") : error;
  }
  return {
    institution: row,
    memberCount: admin ? 1 : 0,
    admin: admin
      ? {
          id: admin.id,
          invitationUrl: invitationUrl(origin, admin.invitation.token),
          invitationExpiresAt: admin.invitation.expiresAt,
        }
      : null,
  };
}

export interface UpdateInstitutionInput {
  name?: string;
  branding?: Branding;
  locale?: string;
  time_zone?: string;
  plan?: Plan;
  rate_limit_per_minute?: number | null;
  seats?: number | null;
}

/**
 * Changes an institution within `mayUpdateInstitution`: its admins the name, branding, locale and
 * time zone; platform staff also plan, limit and seats. A plan or limit change reaches every token
 * of the institution on its next request.
 */
export async function updateInstitution(
  ctx: PrincipalContext,
  { id, input }: { id: string; input: UpdateInstitutionInput },
) {
  // Loaded first: an unknown id is 404 before any rule is asked, as another institution's is.
  const current = await findInstitution(ctx, id);
  enforce(mayUpdateInstitution(ctx.principal, current, input));
  const plan = input.plan ?? current.plan;
  const rateLimit =
    input.rate_limit_per_minute !== undefined
      ? input.rate_limit_per_minute
      : plan === "enterprise"
        ? current.rateLimitPerMinute
        : null;
  checkRateLimitPlan(plan, input.rate_limit_per_minute);
  const next: InstitutionRow = {
    ...current,
    name: input.name ?? current.name,
    branding: mergeBranding(current.branding ?? {}, input.branding),
    locale: input.locale ? (Intl.getCanonicalLocales(input.locale)[0] ?? input.locale) : current.locale,
    timeZone: input.time_zone ?? current.timeZone,
    plan,
    rateLimitPerMinute: rateLimit,
    seats: input.seats !== undefined ? input.seats : current.seats,
    updatedAt: nowIso(ctx.now()),
  };
  const { db } = ctx;
  await db
    .update(institutions)
    .set({
      name: next.name,
      branding: next.branding,
      locale: next.locale,
      timeZone: next.timeZone,
      plan: next.plan,
      rateLimitPerMinute: next.rateLimitPerMinute,
      seats: next.seats,
      updatedAt: next.updatedAt,
    })
    .where(eq(institutions.id, current.id))
    .run();
  // The cached principal carries the institution's name, plan and limit.
  if (
    next.plan !== current.plan ||
    next.rateLimitPerMinute !== current.rateLimitPerMinute ||
    next.name !== current.name
  )
    await refreshPrincipals(ctx, { institutionId: current.id });
  return { institution: next, memberCount: await memberCount(db, current.id) };
}
