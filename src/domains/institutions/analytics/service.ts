import { eq, getTableColumns } from "drizzle-orm";
import { institutions } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { dayMs } from "../../../platform/dates";
import { ApiError } from "../../../platform/errors";
import { ifNoneMatchHits } from "../../../platform/http/edge-cache";
import type { PrincipalContext } from "../../../platform/service/context";
import type { InstitutionRow } from "../access";
import { mayActOn } from "../policy";
import { figures } from "./figures";
import { type Granularity, periodStarts, resolveRange, todayIn } from "./range";
import { revisionsColumn } from "./sql";

/**
 * Reading an institution's analytics: the tenant check, the resolved range, the answer's ETag and
 * caching, and a `304` when the caller holds the current ETag; the figures themselves come from
 * figures.ts.
 */

type Query = { from?: string; to?: string; granularity: Granularity; group?: string };

/** What changes the ETag: the format, the institution's face, the range asked, and the revisions of what it reads. */
const ETAG_FORMAT = 1;

async function weakEtag(parts: unknown[]): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(parts));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const byte of digest.slice(0, 16)) hex += byte.toString(16).padStart(2, "0");
  return `W/"${hex}"`;
}

/**
 * The answer's validator, from what it is made of: the institution's name and branding, the resolved
 * range, granularity and group, and the revisions the rollups' triggers raise — the members'
 * (members, groups, CEFR levels; any change of which changes every answer) and those of the months the
 * range touches (any activity recorded for a day of theirs, late or not). Equal ETags: equal figures.
 */
function etagOf(
  institution: InstitutionRow,
  range: { from: string; to: string; granularity: Granularity; group: string | null },
  revisions: Map<string, number>,
): Promise<string> {
  const months = periodStarts(range.from, range.to, "month").map((m) => m.slice(0, 7));
  return weakEtag([
    ETAG_FORMAT,
    institution.id,
    institution.name,
    institution.branding ?? null,
    range,
    revisions.get("") ?? 0,
    months.map((m) => revisions.get(m) ?? 0),
  ]);
}

export type AnalyticsAnswer =
  | { status: 304; etag: string; cacheControl: string }
  | { status: 200; etag: string; cacheControl: string; body: Awaited<ReturnType<typeof figures>> };

/**
 * The white-label dashboard's data, or `304` when `ifNoneMatch` holds its current ETag. First
 * statement: the institution (the tenant check, the default range's time zone) with its revisions, a
 * few rows; with a matching ETag that is all. Otherwise, for the whole institution one statement over
 * the rollups (`rollupStatement`), for one group one batch of two over its members' rows
 * (`groupMembersStatement`, `groupActivityStatement`). No statement reads `attempts`.
 */
export async function readAnalytics(
  ctx: PrincipalContext,
  { institutionId, query, ifNoneMatch }: { institutionId: string; query: Query; ifNoneMatch?: string | null },
): Promise<AnalyticsAnswer> {
  enforce(mayActOn(ctx.principal, { id: institutionId }));
  const found = await ctx.db
    .select({ ...getTableColumns(institutions), revisions: revisionsColumn(institutions.id) })
    .from(institutions)
    .where(eq(institutions.id, institutionId))
    .get();
  if (!found) throw new ApiError("not_found", `No institution ${institutionId}.`);
  const { revisions, ...institution } = found;
  const nowMs = ctx.now();
  const { from, to } = resolveRange(query, institution.timeZone, nowMs);
  const range = { from, to, granularity: query.granularity, group: query.group ?? null };
  const etag = await etagOf(institution, range, new Map(JSON.parse(revisions) as [string, number][]));
  const today = todayIn(institution.timeZone, nowMs);
  // A range that includes today changes with every recording: a minute of staleness at most. One that
  // ended before today changes only with late recordings: revalidate each time (a 304 is cheap).
  const cacheControl = dayMs(to) >= dayMs(today) ? "private, max-age=60" : "private, no-cache";
  if (ifNoneMatchHits(ifNoneMatch, etag)) return { status: 304, etag, cacheControl };
  return { status: 200, etag, cacheControl, body: await figures(ctx, institution, range, nowMs) };
}
