import type { SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { nowIso } from "../../../platform/ids";
import type { PrincipalContext } from "../../../platform/service/context";
import type { InstitutionRow } from "../access";
import { activityTotals, cefrDistribution, fullTotals, topCourses } from "./present";
import { type Granularity, periodStarts, splitRange } from "./range";
import {
  type ActivityRow,
  type Filter,
  GROUPS_SEPARATOR,
  groupActivityStatement,
  groupMembersStatement,
  type MembersRow,
  type RollupRow,
  rollupStatement,
} from "./sql";

/**
 * The body of an analytics answer for a resolved range: the institution's face and the range, then
 * for the whole institution every figure from the rollups in one statement (`wholeInstitution`), for
 * one group every figure from its members' own rows in one batch of two (`oneGroup`). service.ts
 * decides whether it is read at all (the ETag); present.ts shapes the figures.
 */

const dialect = new SQLiteSyncDialect();

function prepare(ctx: PrincipalContext, query: SQL) {
  const { sql, params } = dialect.sqlToQuery(query);
  return ctx.d1.prepare(sql).bind(...params);
}

export async function figures(
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
