import { eq, getTableColumns, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { CEFR_LEVELS, institutions, SKILLS } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { dayMs } from "../../../platform/dates";
import { ApiError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import type { PrincipalContext } from "../../../platform/service/context";
import type { InstitutionRow } from "../access";
import { mayActOn } from "../policy";
import { type Granularity, periodStarts, resolveRange, splitRange, todayIn } from "./range";
import {
  type ActivityRow,
  type Filter,
  GROUPS_SEPARATOR,
  groupActivityStatement,
  groupMembersStatement,
  type MembersRow,
  type RollupRow,
  revisionsColumn,
  rollupStatement,
  TOP_COURSES,
} from "./sql";

const dialect = new SQLiteSyncDialect();

type Levels = Record<(typeof CEFR_LEVELS)[number] | "none", number>;

function minutes(seconds: number | null): number {
  return Math.round((seconds ?? 0) / 6) / 10;
}

/** A row's learners and sums, wherever it comes from. */
type Figures = Pick<ActivityRow, "learners" | "attempts" | "seconds" | "xp" | "lessons" | "courses">;

function activityTotals(row: Figures | undefined) {
  return {
    active_learners: row?.learners ?? 0,
    minutes: minutes(row?.seconds ?? 0),
    attempts: row?.attempts ?? 0,
    lessons_completed: row?.lessons ?? 0,
  };
}

function fullTotals(row: Figures | undefined) {
  return { ...activityTotals(row), courses_completed: row?.courses ?? 0, xp: row?.xp ?? 0 };
}

/** Learners per level for `overall` and each skill; those without a level count as `none`. */
function cefrDistribution(cefrJson: string, learners: number) {
  const empty = (): Levels => ({ ...Object.fromEntries(CEFR_LEVELS.map((l) => [l, 0])), none: 0 }) as Levels;
  const keys = ["overall", ...SKILLS] as const;
  const byKey = new Map<string, Levels>(keys.map((k) => [k, empty()]));
  for (const [key, level, count] of JSON.parse(cefrJson) as [string, string, number][]) {
    const levels = byKey.get(key);
    if (levels && (CEFR_LEVELS as readonly string[]).includes(level)) levels[level as keyof Levels] += count;
  }
  for (const levels of byKey.values()) {
    const known = CEFR_LEVELS.reduce((sum, l) => sum + levels[l], 0);
    levels.none = Math.max(0, learners - known);
  }
  const [overall, ...skills] = keys.map((k) => byKey.get(k) as Levels);
  return {
    overall: overall as Levels,
    skills: Object.fromEntries(SKILLS.map((s, i) => [s, skills[i] as Levels])) as Record<
      (typeof SKILLS)[number],
      Levels
    >,
  };
}

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
  if (ifNoneMatch && ifNoneMatchHits(ifNoneMatch, etag)) return { status: 304, etag, cacheControl };
  return { status: 200, etag, cacheControl, body: await figures(ctx, institution, range, nowMs) };
}

/** RFC 9110 §13.1.2: `*` or a list of entity tags, compared weakly. */
function ifNoneMatchHits(header: string, etag: string): boolean {
  const trimmed = header.trim();
  if (trimmed === "*") return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return trimmed.split(",").some((candidate) => opaque(candidate) === opaque(etag));
}

function prepare(ctx: PrincipalContext, query: SQL) {
  const { sql, params } = dialect.sqlToQuery(query);
  return ctx.d1.prepare(sql).bind(...params);
}

async function figures(
  ctx: PrincipalContext,
  institution: InstitutionRow,
  range: { from: string; to: string; granularity: Granularity; group: string | null },
  nowMs: number,
) {
  const branding = institution.branding ?? {};
  const head = {
    institution: {
      id: institution.id,
      name: institution.name,
      branding: {
        display_name: branding.display_name ?? null,
        logo_url: branding.logo_url ?? null,
        primary_color: branding.primary_color ?? null,
        accent_color: branding.accent_color ?? null,
      },
    },
    range,
    generated_at: nowIso(nowMs),
  };
  const filter: Filter = {
    institutionId: institution.id,
    from: range.from,
    to: range.to,
    group: range.group,
  };
  const rest =
    filter.group === null
      ? await wholeInstitution(ctx, filter, range.granularity)
      : await oneGroup(ctx, { ...filter, group: filter.group }, range.granularity);
  return { ...head, ...rest };
}

function topCourses(rows: ActivityRow[]) {
  return rows
    .sort(
      (a, b) =>
        b.learners - a.learners ||
        (b.courses ?? 0) - (a.courses ?? 0) ||
        (String(a.k) < String(b.k) ? -1 : String(a.k) > String(b.k) ? 1 : 0),
    )
    .slice(0, TOP_COURSES)
    .map((row) => ({
      course_id: row.k ?? "",
      title: row.title ?? "",
      slug: row.slug ?? "",
      active_learners: row.learners,
      completions: row.courses ?? 0,
      lessons_completed: row.lessons ?? 0,
      minutes: minutes(row.seconds),
    }));
}

type Sums = Pick<ActivityRow, "attempts" | "seconds" | "xp" | "lessons" | "courses">;

const zero = (): Sums & { learners: number } => ({
  learners: 0,
  attempts: 0,
  seconds: 0,
  xp: 0,
  lessons: 0,
  courses: 0,
});

function addTo(into: Sums, [attempts, seconds, xp, lessons, courses]: number[]) {
  into.attempts = (into.attempts ?? 0) + (attempts ?? 0);
  into.seconds = (into.seconds ?? 0) + (seconds ?? 0);
  into.xp = (into.xp ?? 0) + (xp ?? 0);
  into.lessons = (into.lessons ?? 0) + (lessons ?? 0);
  into.courses = (into.courses ?? 0) + (courses ?? 0);
}

/** The whole institution: every figure from the rollups, in one statement. */
async function wholeInstitution(ctx: PrincipalContext, filter: Filter, granularity: Granularity) {
  const { from, to } = filter;
  const split = splitRange(from, to, granularity);
  // A partial period of one day is that day: its row counts its learners, no pair need be walked for it.
  const oneDay = (edge: [string, string] | null) => edge !== null && edge[0] === edge[1];
  const plan = {
    institutionId: filter.institutionId,
    from,
    to,
    granularity,
    ...split,
    firstEdge: oneDay(split.firstEdge) ? null : split.firstEdge,
    lastEdge: oneDay(split.lastEdge) ? null : split.lastEdge,
  };
  const row = (await prepare(ctx, rollupStatement(plan)).first()) as RollupRow | null;
  const json = <T>(text: string | undefined): T[] => JSON.parse(text ?? "[]") as T[];
  const members = json<[string, number, number]>(row?.members);
  const whole = members.find(([name]) => name === "");
  // Learners per (list of groups, list of courses): the range's, its partial periods', each group's and course's.
  let activeLearners = 0;
  let firstEdgeLearners = 0;
  let lastEdgeLearners = 0;
  const groupLearners = new Map<string, number>();
  const courseLearners = new Map<string, number>();
  const bump = (map: Map<string, number>, list: string | null, n: number) => {
    if (list) for (const k of list.split(GROUPS_SEPARATOR)) map.set(k, (map.get(k) ?? 0) + n);
  };
  for (const [groups, courseList, n, e1, e2] of json<[string, string | null, number, number, number]>(
    row?.learners,
  )) {
    activeLearners += n;
    firstEdgeLearners += e1;
    lastEdgeLearners += e2;
    bump(groupLearners, groups, n);
    bump(courseLearners, courseList, n);
  }

  // Sums from the day rows; distinct learners from a day's row, a whole period's counter, or an edge's count.
  const total = { ...zero(), learners: activeLearners };
  const starts = periodStarts(from, to, granularity);
  const series = new Map(starts.map((s) => [s, zero()]));
  const dayLearners = new Map<string, number>();
  for (const [day, learners, ...sums] of json<[string, number, ...number[]]>(row?.days)) {
    dayLearners.set(day, learners);
    addTo(total, sums);
    let start = starts[0] as string;
    for (const s of starts) if (s <= day) start = s;
    const point = series.get(start);
    if (!point) continue;
    addTo(point, sums);
    if (granularity === "day") point.learners = learners;
  }
  if (granularity !== "day") {
    const counters = new Map(json<[string, number]>(row?.periods));
    for (const [start, point] of series) {
      if (split.single) point.learners = activeLearners;
      else if (split.firstEdge && start === starts[0])
        point.learners = plan.firstEdge ? firstEdgeLearners : (dayLearners.get(split.firstEdge[0]) ?? 0);
      else if (split.lastEdge && start === starts.at(-1))
        point.learners = plan.lastEdge ? lastEdgeLearners : (dayLearners.get(split.lastEdge[0]) ?? 0);
      else point.learners = counters.get(start) ?? 0;
    }
  }

  const courseSums = new Map(json<[string, ...number[]]>(row?.courses).map(([k, ...sums]) => [k, sums]));
  const courseRows = json<[string, string, string]>(row?.titles).map(([k, title, slug]): ActivityRow => {
    const out: ActivityRow = {
      kind: "course",
      k,
      title,
      slug,
      ...zero(),
      learners: courseLearners.get(k) ?? 0,
    };
    addTo(out, courseSums.get(k) ?? []);
    return out;
  });

  const groupSums = new Map(json<[string, ...number[]]>(row?.groups).map(([k, ...sums]) => [k, sums]));
  const groups = members
    .filter(([name]) => name !== "")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, count]) => {
      const figures = { ...zero(), learners: groupLearners.get(name) ?? 0 };
      addTo(figures, groupSums.get(name) ?? []);
      return { name, members: count, ...fullTotals(figures) };
    });

  return {
    totals: { members: whole?.[1] ?? 0, ...fullTotals(total) },
    series: starts.map((date) => ({ date, ...activityTotals(series.get(date)) })),
    cefr_distribution: cefrDistribution(row?.cefr ?? "[]", whole?.[2] ?? 0),
    top_courses: topCourses(courseRows),
    groups,
  };
}

/** One group: every figure from its members' own rows. */
async function oneGroup(ctx: PrincipalContext, filter: Filter & { group: string }, granularity: Granularity) {
  const [membersResult, activityResult] = await ctx.d1.batch([
    prepare(ctx, groupMembersStatement(filter)),
    prepare(ctx, groupActivityStatement(filter, granularity)),
  ]);
  const members = (membersResult?.results as MembersRow[] | undefined)?.[0];
  const activity = (activityResult?.results ?? []) as ActivityRow[];
  const of = (kind: ActivityRow["kind"]) => activity.filter((row) => row.kind === kind);
  const series = new Map(of("series").map((row) => [row.k, row]));
  const total = of("total")[0];
  const memberCount = members?.members ?? 0;
  return {
    totals: { members: memberCount, ...fullTotals(total) },
    series: periodStarts(filter.from, filter.to, granularity).map((date) => ({
      date,
      ...activityTotals(series.get(date)),
    })),
    cefr_distribution: cefrDistribution(members?.cefr ?? "[]", members?.learners ?? 0),
    top_courses: topCourses(of("course")),
    groups: memberCount > 0 ? [{ name: filter.group, members: memberCount, ...fullTotals(total) }] : [],
  };
}
