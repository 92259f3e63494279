import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import { type Branding, institutions, type Plan } from "../../db/schema";
import type { Env } from "../../env";
import type { Principal } from "../../platform/auth/principal";
import type { Statement } from "../../platform/batch";
import { database } from "../../platform/db";
import { ApiError, validationError } from "../../platform/errors";
import { publishEvents } from "../../platform/events";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { invitationUrl, mintInvitation } from "../members/invitations";
import { refreshPrincipals } from "../members/principal-refresh";
import { memberCount } from "../members/queries";
import { insertMemberStatements, uniqueConflict } from "../members/service";
import { type InstitutionRow, institutionInScope, isPlatformStaff } from "./access";

const memberCountOf = sql<number>`(SELECT count(*) FROM users AS member WHERE member.institution_id = "institutions"."id")`;

export async function listInstitutions(args: {
  env: Env;
  principal: Principal;
  page: PageRequest;
  q?: string;
  plan?: Plan;
}) {
  const db = database(args.env.DB);
  const conditions: SQL[] = [];
  if (!isPlatformStaff(args.principal))
    conditions.push(eq(institutions.id, args.principal.institution?.id ?? ""));
  if (args.plan) conditions.push(eq(institutions.plan, args.plan));
  if (args.q) {
    const pattern = `%${args.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(
      sql`(lower(${institutions.name}) LIKE ${pattern} ESCAPE '\\' OR ${institutions.slug} LIKE ${pattern} ESCAPE '\\')`,
    );
  }
  const where = and(...conditions);
  const { limit, offset } = pageBounds(args.page);
  return pageWithTotal(
    db,
    db
      .select({ institution: institutions, memberCount: memberCountOf })
      .from(institutions)
      .where(where)
      .orderBy(asc(sql`lower(${institutions.name})`), asc(institutions.id))
      .limit(limit)
      .offset(offset),
    institutions,
    where,
  );
}

export async function getInstitution(env: Env, principal: Principal, id: string) {
  const institution = await institutionInScope(env, principal, id);
  return { institution, memberCount: await memberCount(database(env.DB), id) };
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
}

function slugConflict(error: unknown): ApiError | null {
  const text = String(error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : error);
  return /UNIQUE constraint failed: institutions\.slug/.test(text)
    ? new ApiError("slug_taken", "Another institution has this slug; choose another `slug`.")
    : null;
}

/** Platform staff create an institution, and with `admin` its first (invited) admin in the same batch. */
export async function createInstitution(args: {
  env: Env;
  principal: Principal;
  input: CreateInstitutionInput;
  origin: string;
}) {
  const { env, principal, input } = args;
  if (!isPlatformStaff(principal))
    throw new ApiError("forbidden", "Only platform staff create institutions.");
  checkRateLimitPlan(input.plan, input.rate_limit_per_minute);
  const db = database(env.DB);
  const now = nowIso();
  const row: InstitutionRow = {
    id: newId("ins"),
    slug: input.slug ?? slugFrom(input.name),
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
  const statements: Statement[] = [db.insert(institutions).values(row)];
  let admin: { id: string; invitation: Awaited<ReturnType<typeof mintInvitation>> } | null = null;
  const eventIds: string[] = [];
  if (input.admin) {
    admin = { id: newId("usr"), invitation: await mintInvitation() };
    const member = {
      id: admin.id,
      email: input.admin.email.trim().toLowerCase(),
      name: input.admin.name,
      role: "institution_admin" as const,
      externalId: null,
      groups: [],
    };
    const created = insertMemberStatements(db, env, row.id, member, admin.invitation, now);
    statements.push(...created.statements);
    eventIds.push(created.event.id);
  }
  try {
    await db.batch(statements as [Statement, ...Statement[]]);
  } catch (error) {
    throw slugConflict(error) ?? uniqueConflict(error) ?? error;
  }
  await publishEvents(env, eventIds);
  return {
    institution: row,
    memberCount: admin ? 1 : 0,
    admin: admin
      ? {
          id: admin.id,
          invitationUrl: invitationUrl(args.origin, admin.invitation.token),
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

const STAFF_ONLY = ["plan", "rate_limit_per_minute", "seats"] as const;

/**
 * Institution admins change name, branding, locale and time zone; plan, limit and seats are for
 * platform staff. A plan or limit change reaches every token of the institution on its next request.
 */
export async function updateInstitution(args: {
  env: Env;
  principal: Principal;
  id: string;
  input: UpdateInstitutionInput;
}) {
  const { env, principal, input } = args;
  const current = await institutionInScope(env, principal, args.id);
  const staffFields = STAFF_ONLY.filter((field) => input[field] !== undefined);
  // No ability of its own: the institution's settings go with administering it.
  const needed =
    isPlatformStaff(principal) && staffFields.length > 0 ? "institutions:write" : "members:write";
  if (!principal.token.abilities.includes(needed))
    throw new ApiError("missing_ability", `This token lacks the \`${needed}\` ability.`);
  if (!isPlatformStaff(principal)) {
    if (principal.user.role !== "institution_admin")
      throw new ApiError("forbidden", "Only the institution's admins change its settings.");
    if (staffFields.length > 0)
      throw new ApiError(
        "forbidden",
        `Only platform staff change ${staffFields.map((f) => `\`${f}\``).join(", ")}.`,
      );
  }
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
    updatedAt: nowIso(),
  };
  const db = database(env.DB);
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
    await refreshPrincipals(env, { institutionId: current.id });
  return { institution: next, memberCount: await memberCount(db, current.id) };
}
