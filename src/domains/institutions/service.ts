import { and, asc, desc, eq, type SQL } from "drizzle-orm";
import { type Branding, institutions, type Plan } from "../../db/schema";
import { enforce } from "../../platform/auth/policy";
import { type PageRequest, pageWithTotal } from "../../platform/http/pagination";
import { mergeWindows, type PageCursor, type SortKey, windowFor } from "../../platform/http/spread-pages";
import { nowIso } from "../../platform/ids";
import { everyDatabase, type PrincipalContext } from "../../platform/service/context";
import { refreshPrincipals } from "../members/principal-refresh";
import { memberCount } from "../members/queries";
import { findInstitution, type InstitutionRow, institutionInScope } from "./access";
import { mayUpdateInstitution, visibleInstitutions } from "./policy";
import { canonicalLocale, checkRateLimitPlan, mergeBranding } from "./rules";
import { beyondInListOrder, MEMBER_COUNT, nameOrSlugContains, SORT_NAME } from "./sql";

/**
 * The institutions API's verbs over existing institutions: listing those the caller sees, reading
 * one, and changing one. Creating one (placing it in a database, claiming its slug): creation.ts.
 */

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
    locale: input.locale ? canonicalLocale(input.locale) : current.locale,
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
