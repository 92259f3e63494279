import type { SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { CEFR_LEVELS, SKILLS } from "../../../db/schema";
import type { PrincipalContext } from "../../../platform/service/context";
import { institutionInScope } from "../access";
import { type Granularity, periodStarts, resolveRange } from "./range";
import {
  type ActivityRow,
  activityStatement,
  type Filter,
  type MembersRow,
  membersStatement,
  TOP_COURSES,
} from "./sql";

const dialect = new SQLiteSyncDialect();

type Levels = Record<(typeof CEFR_LEVELS)[number] | "none", number>;

function minutes(seconds: number | null): number {
  return Math.round((seconds ?? 0) / 6) / 10;
}

function activityTotals(row: ActivityRow | undefined) {
  return {
    active_learners: row?.learners ?? 0,
    minutes: minutes(row?.seconds ?? 0),
    attempts: row?.attempts ?? 0,
    lessons_completed: row?.lessons ?? 0,
  };
}

function fullTotals(row: ActivityRow | undefined) {
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

/**
 * The white-label dashboard's data. Three D1 statements in two round trips: the institution (which
 * is also the tenant check and gives the default range's time zone), then one batch of the members
 * statement and the activity statement. The activity comes from `institution_activity_days`, kept by
 * every recording: no statement reads `attempts`.
 */
export async function readAnalytics(
  ctx: PrincipalContext,
  {
    institutionId,
    query,
  }: {
    institutionId: string;
    query: { from?: string; to?: string; granularity: Granularity; group?: string };
  },
) {
  const institution = await institutionInScope(ctx, institutionId);
  const { from, to } = resolveRange(query, institution.timeZone, ctx.now());
  const filter: Filter = { institutionId, from, to, group: query.group ?? null };
  const d1 = ctx.d1;
  const prepare = (query: SQL) => {
    const { sql, params } = dialect.sqlToQuery(query);
    return d1.prepare(sql).bind(...params);
  };
  const [membersResult, activityResult] = await d1.batch([
    prepare(membersStatement(filter)),
    prepare(activityStatement(filter, query.granularity)),
  ]);
  const members = (membersResult?.results as MembersRow[] | undefined)?.[0];
  const activity = (activityResult?.results ?? []) as ActivityRow[];
  const of = (kind: ActivityRow["kind"]) => activity.filter((row) => row.kind === kind);
  const series = new Map(of("series").map((row) => [row.k, row]));
  const groupActivity = new Map(of("group").map((row) => [row.k, row]));
  const groupMembers = JSON.parse(members?.groups ?? "[]") as [string, number][];
  const branding = institution.branding ?? {};
  return {
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
    range: { from, to, granularity: query.granularity, group: filter.group },
    totals: { members: members?.members ?? 0, ...fullTotals(of("total")[0]) },
    series: periodStarts(from, to, query.granularity).map((date) => ({
      date,
      ...activityTotals(series.get(date)),
    })),
    cefr_distribution: cefrDistribution(members?.cefr ?? "[]", members?.learners ?? 0),
    top_courses: of("course")
      .sort(
        (a, b) =>
          b.learners - a.learners ||
          (b.courses ?? 0) - (a.courses ?? 0) ||
          String(a.k).localeCompare(String(b.k)),
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
      })),
    groups: groupMembers
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, count]) => ({ name, members: count, ...fullTotals(groupActivity.get(name)) })),
  };
}
