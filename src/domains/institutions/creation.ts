import { and, eq, notExists, type SQL } from "drizzle-orm";
import { type Branding, directoryKeys, institutions, type Plan } from "../../db/schema";
import { enforce } from "../../platform/auth/policy";
import { batchGuard, isBatchGuardFailure } from "../../platform/batch";
import type { Database } from "../../platform/db";
import { ApiError, validationError } from "../../platform/errors";
import type { OutboxRow } from "../../platform/events";
import { newId, nowIso } from "../../platform/ids";
import { commit, type Writable } from "../../platform/service/commit";
import { type PrincipalContext, useDatabase } from "../../platform/service/context";
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
import { uniqueConflict } from "../members/rules";
import type { InstitutionRow } from "./access";
import { mayCreateInstitution } from "./policy";
import { canonicalLocale, checkRateLimitPlan, mergeBranding } from "./rules";

/**
 * Creating an institution (platform staff only): placed in a database first — the least full one
 * unless staff choose — with its slug claimed across databases, then its row and, with `admin`, its
 * first (invited) admin in one `commit`. A slug another institution holds, in any database, is
 * `slug_taken`. Listing, reading and changing institutions: service.ts.
 */

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
    locale: input.locale ? canonicalLocale(input.locale) : "en",
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
