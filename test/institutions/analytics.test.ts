import { createExecutionContext, env } from "cloudflare:test";
import { and, eq, isNotNull } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  MIGRATIONS_SINCE_BACKFILL,
  migrationNamed,
  tablesAsBackfillWants,
} from "../../scripts/analytics-backfill-shape.mjs";
import { withD1Meter } from "../../scripts/bench/worker-wrappers.mjs";
import { institutionNumberOf } from "../../src/db/numbers";
import {
  attempts as attemptRows,
  courseProgress,
  courses as courseRows,
  institutionActivityDays,
  institutionActivityTotals,
  institutionCefrCounts,
  institutionLearnerCourses,
  institutionMemberCounts,
  institutions,
  learnerStats,
  lessonProgress,
  memberGroups,
  users,
} from "../../src/db/schema";
import worker from "../../src/index";
import { database } from "../../src/platform/db";
import { BASE, callJson, fetchWorker } from "../helpers/api";
import { type CourseFixture, createPublishedCourse } from "../helpers/progress-fixture";
import {
  createPlatformAdmin,
  createTenant,
  insertUser,
  signIn,
  type Tenant,
  type TestUser,
} from "../helpers/tenants";

const DAY_MS = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) =>
  new Date(Date.parse(`${today}T00:00:00Z`) - n * DAY_MS).toISOString().slice(0, 10);
const LEVELS = ["A1", "A2", "B1", "B2", "C1", "C2"];
const SKILLS = ["reading", "listening", "writing", "speaking", "vocabulary", "grammar"];

let tenant: Tenant;
let other: Tenant;
let learners: TestUser[];
let courses: CourseFixture[];

async function learner(institutionId: string): Promise<TestUser> {
  const { id, email } = await insertUser("learner", institutionId);
  return { id, email, role: "learner", ...(await signIn(email)) };
}

/** Records attempts through the API, one recording per learner and day. */
async function practise(
  user: TestUser,
  day: string,
  items: string[],
  options: { correct?: boolean; seconds?: number } = {},
) {
  const attempts = items.map((itemId, i) => ({
    id: crypto.randomUUID(),
    training_item_id: itemId,
    score: options.correct === false ? 0.2 : 1,
    correct: options.correct !== false,
    duration_seconds: (options.seconds ?? 30) + i,
    occurred_at: `${day}T10:${String(i % 60).padStart(2, "0")}:00Z`,
  }));
  const { res, body } = await callJson("/api/progress/attempts", { token: user.token, body: { attempts } });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
  return attempts;
}

function analytics(query: string, token = tenant.admin.token, extra: Record<string, unknown> = {}) {
  return callJson(`/api/institutions/${tenant.institution.id}/analytics${query}`, { token, ...extra });
}

// --- brute force over what was recorded ----------------------------------------------------------

interface Attempt {
  user_id: string;
  course_id: string;
  local_day: string;
  duration_seconds: number;
  xp_awarded: number;
}

const db = () => database(env.DB);

async function rawAttempts(institutionId: string): Promise<Attempt[]> {
  return db()
    .select({
      user_id: attemptRows.userId,
      course_id: attemptRows.courseId,
      local_day: attemptRows.localDay,
      duration_seconds: attemptRows.durationSeconds,
      xp_awarded: attemptRows.xpAwarded,
    })
    .from(attemptRows)
    .where(eq(attemptRows.institutionId, institutionId));
}

async function completions(table: typeof lessonProgress | typeof courseProgress, members: string[]) {
  const rows =
    table === lessonProgress
      ? // Stored by numbers: the ids through users and courses.
        await db()
          .select({ user_id: users.id, course_id: courseRows.id, completedAt: lessonProgress.completedAt })
          .from(lessonProgress)
          .innerJoin(users, eq(users.number, lessonProgress.userNumber))
          .innerJoin(courseRows, eq(courseRows.number, lessonProgress.courseNumber))
          .where(isNotNull(lessonProgress.completedAt))
      : await db()
          .select({
            user_id: courseProgress.userId,
            course_id: courseProgress.courseId,
            completedAt: courseProgress.completedAt,
          })
          .from(courseProgress)
          .where(isNotNull(courseProgress.completedAt));
  return rows
    .filter((r) => members.includes(r.user_id))
    .map(({ completedAt, ...r }) => ({ ...r, day: String(completedAt).slice(0, 10) }));
}

async function expected(from: string, to: string, members: string[]) {
  const attempts = (await rawAttempts(tenant.institution.id)).filter(
    (a) => a.local_day >= from && a.local_day <= to && members.includes(a.user_id),
  );
  const lessons = (await completions(lessonProgress, members)).filter((c) => c.day >= from && c.day <= to);
  const finished = (await completions(courseProgress, members)).filter((c) => c.day >= from && c.day <= to);
  const seconds = attempts.reduce((s, a) => s + a.duration_seconds, 0);
  return {
    attempts,
    lessons,
    finished,
    totals: {
      active_learners: new Set(attempts.map((a) => a.user_id)).size,
      minutes: Math.round(seconds / 6) / 10,
      attempts: attempts.length,
      lessons_completed: lessons.length,
      courses_completed: finished.length,
      xp: attempts.reduce((s, a) => s + a.xp_awarded, 0),
    },
  };
}

function mondayOf(day: string): string {
  const ms = Date.parse(`${day}T00:00:00Z`);
  const weekday = (new Date(ms).getUTCDay() + 6) % 7;
  return new Date(ms - weekday * DAY_MS).toISOString().slice(0, 10);
}

async function memberIds(group?: string): Promise<string[]> {
  const rows = group
    ? await db()
        .select({ id: memberGroups.userId })
        .from(memberGroups)
        .where(and(eq(memberGroups.institutionId, tenant.institution.id), eq(memberGroups.groupName, group)))
    : await db().select({ id: users.id }).from(users).where(eq(users.institutionId, tenant.institution.id));
  return rows.map((r) => r.id);
}

type Granularity = "day" | "week" | "month";

function periodOf(day: string, granularity: Granularity): string {
  if (granularity === "day") return day;
  return granularity === "week" ? mondayOf(day) : `${day.slice(0, 7)}-01`;
}

const minutesOf = (rows: Attempt[]) => Math.round(rows.reduce((s, a) => s + a.duration_seconds, 0) / 6) / 10;

/**
 * Every activity figure of an answer, counted from the attempts and completions themselves: totals,
 * the series (distinct learners per period within the range), the top courses and the groups (their
 * members now). The whole institution's activity is every attempt recorded for it.
 */
async function bruteForce(from: string, to: string, granularity: Granularity, group?: string) {
  const institutionMembers = await memberIds();
  const everyone = [
    ...new Set([...institutionMembers, ...(await rawAttempts(tenant.institution.id)).map((a) => a.user_id)]),
  ];
  const scope = group ? await memberIds(group) : everyone;
  const truth = await expected(from, to, scope);
  const series = [] as Record<string, unknown>[];
  const starts = [...new Set(truth.attempts.map((a) => periodOf(a.local_day, granularity)))];
  const first = periodOf(from, granularity);
  for (
    let day = from;
    day <= to;
    day = new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10)
  ) {
    const start = periodOf(day, granularity);
    if (series.at(-1)?.date === start) continue;
    const rows = truth.attempts.filter((a) => periodOf(a.local_day, granularity) === start);
    series.push({
      date: start,
      active_learners: new Set(rows.map((a) => a.user_id)).size,
      minutes: minutesOf(rows),
      attempts: rows.length,
      lessons_completed: truth.lessons.filter((l) => periodOf(l.day, granularity) === start).length,
    });
  }
  expect(series[0]?.date).toBe(first);
  expect(starts.every((s) => series.some((p) => p.date === s))).toBe(true);
  const byCourse = courses
    .map((c) => {
      const rows = truth.attempts.filter((a) => a.course_id === c.courseId);
      return {
        course_id: c.courseId,
        slug: c.slug,
        title: expect.any(String),
        active_learners: new Set(rows.map((a) => a.user_id)).size,
        completions: truth.finished.filter((f) => f.course_id === c.courseId).length,
        lessons_completed: truth.lessons.filter((l) => l.course_id === c.courseId).length,
        minutes: minutesOf(rows),
      };
    })
    .filter((c) => c.active_learners > 0)
    .sort(
      (a, b) =>
        b.active_learners - a.active_learners ||
        b.completions - a.completions ||
        (a.course_id < b.course_id ? -1 : 1),
    );
  const names = (
    await db()
      .selectDistinct({ name: memberGroups.groupName })
      .from(memberGroups)
      .where(eq(memberGroups.institutionId, tenant.institution.id))
  )
    .map((g) => g.name)
    .filter((name) => !group || name === group)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const groups = [];
  for (const name of names) {
    const members = await memberIds(name);
    groups.push({ name, members: members.length, ...(await expected(from, to, members)).totals });
  }
  return {
    totals: { members: group ? scope.length : institutionMembers.length, ...truth.totals },
    series,
    top_courses: byCourse,
    groups,
  };
}

/** The answer for a range checked, figure by figure, against the brute-force count. */
async function expectExact(from: string, to: string, granularity: Granularity, group?: string) {
  const groupQuery = group ? `&group=${encodeURIComponent(group)}` : "";
  const { res, body } = await analytics(`?from=${from}&to=${to}&granularity=${granularity}${groupQuery}`);
  expect(res.status, JSON.stringify(body)).toBe(200);
  const truth = await bruteForce(from, to, granularity, group);
  const label = `${from}..${to} by ${granularity}${group ? ` in ${group}` : ""}`;
  expect(body.totals, label).toEqual(truth.totals);
  expect(body.series, label).toEqual(truth.series);
  expect(body.top_courses, label).toEqual(truth.top_courses);
  expect(body.groups, label).toEqual(truth.groups);
  return body;
}

/** The first day from `daysAgo(start)` on into the past that passes `test`, moved by `shift` days. */
function dayAgoWhere(start: number, test: (day: Date) => boolean, shift = 0): string {
  for (let n = start; ; n++)
    if (test(new Date(Date.parse(`${daysAgo(n)}T00:00:00Z`)))) return daysAgo(n - shift);
}

/** An answer without the instant it was read at. */
const figures = ({ generated_at: _, ...body }: Record<string, unknown>) => body;

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
  await db()
    .update(institutions)
    .set({ branding: { display_name: "Acme Academy", primary_color: "#112233" } })
    .where(eq(institutions.id, tenant.institution.id));
  learners = [tenant.learner, ...(await Promise.all([1, 2, 3, 4].map(() => learner(tenant.institution.id))))];
  courses = await Promise.all([
    createPublishedCourse({
      lessons: 2,
      blocksPerLesson: 1,
      itemsPerBlock: 3,
      skills: ["vocabulary"],
      levels: ["A1"],
    }),
    createPublishedCourse({
      lessons: 3,
      blocksPerLesson: 1,
      itemsPerBlock: 2,
      skills: ["grammar", "reading"],
      levels: ["A2"],
    }),
  ]);
  const [c1, c2] = courses as [CourseFixture, CourseFixture];
  const [l0, l1, l2, l3] = learners as [TestUser, TestUser, TestUser, TestUser, TestUser];
  const groupRows = [
    [l0, "Class 7a"],
    [l1, "Class 7a"],
    [l2, "Class 7b"],
    [l3, "Class 7b"],
    [l3, "Chess club"],
    [tenant.instructor, "Class 7a"],
  ] as const;
  await db()
    .insert(memberGroups)
    .values(
      groupRows.map(([user, group]) => ({
        institutionId: tenant.institution.id,
        userId: user.id,
        groupName: group,
      })),
    );
  // l0 completes course 1 over two days and practises course 2; repeated practice builds CEFR evidence.
  await practise(l0, daysAgo(12), c1.items.slice(0, 3));
  await practise(l0, daysAgo(10), c1.items.slice(3));
  await practise(l0, daysAgo(10), [...c1.items, ...c1.items, ...c1.items]);
  await practise(l0, daysAgo(4), c2.items.slice(0, 2));
  // l1 completes course 2 in one day, and had activity long before the range.
  await practise(l1, daysAgo(40), c1.items.slice(0, 1));
  await practise(l1, daysAgo(6), c2.items);
  await practise(l1, daysAgo(5), [...c2.items, ...c2.items], { correct: false });
  // l2 practises a little on several days, one of them outside a narrower range.
  for (const n of [1, 8, 9, 15]) await practise(l2, daysAgo(n), c1.items.slice(0, 2), { seconds: 45 });
  // l3 the same day as l0; the fifth learner never practises. A learner of another institution never counts.
  await practise(l3, daysAgo(10), c1.items.slice(0, 4));
  await practise(other.learner, daysAgo(10), c1.items);
});

describe("analytics against a brute-force count of the recorded attempts", () => {
  it("totals, a zero-filled daily series, top courses and the institution's branding", async () => {
    const from = daysAgo(14);
    const to = daysAgo(2);
    const { res, body } = await analytics(`?from=${from}&to=${to}`);
    expect(res.status, JSON.stringify(body)).toBe(200);
    const members = await memberIds();
    const truth = await expected(from, to, members);
    expect(truth.totals.active_learners).toBe(4);
    expect(truth.totals.courses_completed).toBe(2);
    expect(body.institution).toEqual({
      id: tenant.institution.id,
      name: expect.any(String),
      branding: {
        display_name: "Acme Academy",
        logo_url: null,
        primary_color: "#112233",
        accent_color: null,
      },
    });
    expect(body.range).toEqual({ from, to, granularity: "day", group: null });
    expect(body.totals).toEqual({ members: members.length, ...truth.totals });

    expect(body.series).toHaveLength(13);
    expect(body.series[0].date).toBe(from);
    expect(body.series.at(-1).date).toBe(to);
    for (const point of body.series) {
      const day = truth.attempts.filter((a) => a.local_day === point.date);
      expect(point, point.date).toEqual({
        date: point.date,
        active_learners: new Set(day.map((a) => a.user_id)).size,
        minutes: Math.round(day.reduce((s, a) => s + a.duration_seconds, 0) / 6) / 10,
        attempts: day.length,
        lessons_completed: truth.lessons.filter((l) => l.day === point.date).length,
      });
    }

    const byCourse = courses.map((c) => {
      const rows = truth.attempts.filter((a) => a.course_id === c.courseId);
      return {
        course_id: c.courseId,
        slug: c.slug,
        active_learners: new Set(rows.map((a) => a.user_id)).size,
        completions: truth.finished.filter((f) => f.course_id === c.courseId).length,
        lessons_completed: truth.lessons.filter((l) => l.course_id === c.courseId).length,
        minutes: Math.round(rows.reduce((s, a) => s + a.duration_seconds, 0) / 6) / 10,
      };
    });
    byCourse.sort((a, b) => b.active_learners - a.active_learners || b.completions - a.completions);
    expect(body.top_courses).toEqual(byCourse.map((c) => ({ ...c, title: expect.any(String) })));
  });

  it("weekly and monthly series count distinct learners per period", async () => {
    const from = daysAgo(45);
    const to = today;
    const members = await memberIds();
    const truth = await expected(from, to, members);
    for (const granularity of ["week", "month"] as const) {
      const { res, body } = await analytics(`?from=${from}&to=${to}&granularity=${granularity}`);
      expect(res.status).toBe(200);
      const periodOf = (day: string) => (granularity === "week" ? mondayOf(day) : `${day.slice(0, 7)}-01`);
      expect(body.series[0].date).toBe(periodOf(from));
      expect(body.series.at(-1).date).toBe(periodOf(to));
      for (const point of body.series) {
        const rows = truth.attempts.filter((a) => periodOf(a.local_day) === point.date);
        expect(point.active_learners, `${granularity} ${point.date}`).toBe(
          new Set(rows.map((a) => a.user_id)).size,
        );
        expect(point.attempts).toBe(rows.length);
        expect(point.lessons_completed).toBe(
          truth.lessons.filter((l) => periodOf(l.day) === point.date).length,
        );
      }
      expect(body.series.reduce((s: number, p: any) => s + p.attempts, 0)).toBe(truth.totals.attempts);
      expect(body.totals).toMatchObject(truth.totals);
    }
  });

  it("groups carry the same totals, and `group` restricts every figure to its members", async () => {
    const from = daysAgo(30);
    const to = today;
    const { body } = await analytics(`?from=${from}&to=${to}`);
    const names = ["Chess club", "Class 7a", "Class 7b"];
    expect(body.groups.map((g: any) => g.name)).toEqual(names);
    for (const name of names) {
      const members = await memberIds(name);
      const truth = await expected(from, to, members);
      expect(body.groups.find((g: any) => g.name === name)).toEqual({
        name,
        members: members.length,
        ...truth.totals,
      });
      const filtered = await analytics(`?from=${from}&to=${to}&group=${encodeURIComponent(name)}`);
      expect(filtered.body.totals).toEqual({ members: members.length, ...truth.totals });
      expect(filtered.body.groups).toEqual([{ name, members: members.length, ...truth.totals }]);
      expect(filtered.body.range.group).toBe(name);
    }
    const nobody = await analytics(`?group=Nobody`);
    expect(nobody.body.totals).toMatchObject({ members: 0, active_learners: 0, attempts: 0 });
  });

  it("the CEFR distribution counts every learner's current level, none for the rest", async () => {
    const { body } = await analytics("");
    const results = await db()
      .select({ id: users.id, cefrLevels: learnerStats.cefrLevels })
      .from(users)
      .leftJoin(learnerStats, eq(learnerStats.userId, users.id))
      .where(and(eq(users.institutionId, tenant.institution.id), eq(users.role, "learner")));
    const count = (key: string) => {
      const out: Record<string, number> = Object.fromEntries([...LEVELS, "none"].map((l) => [l, 0]));
      for (const row of results) {
        const level = row.cefrLevels ? row.cefrLevels[key] : undefined;
        out[level ?? "none"]! += 1;
      }
      return out;
    };
    expect(body.cefr_distribution.overall).toEqual(count("overall"));
    for (const skill of SKILLS) expect(body.cefr_distribution.skills[skill], skill).toEqual(count(skill));
    // The dataset is built so that somebody has a level: the comparison is not all zeros.
    expect(body.cefr_distribution.skills.vocabulary.none).toBeLessThan(learners.length);
  });

  it("defaults to the last 30 days; validates the range", async () => {
    const { body } = await analytics("");
    expect(body.range).toEqual({ from: daysAgo(29), to: today, granularity: "day", group: null });
    expect(body.series).toHaveLength(30);
    const cases: [string, string][] = [
      [`?from=${daysAgo(3)}&to=${daysAgo(5)}`, "from"],
      ["?from=2025-01-01&to=2026-01-02", "from"],
      ["?from=2026-02-30", "from"],
      ["?to=yesterday", "to"],
      ["?granularity=year", "granularity"],
      ["?course=x", "course"],
    ];
    for (const [query, path] of cases) {
      const { res, body: problem } = await analytics(query);
      expect(res.status, query).toBe(422);
      expect(
        problem.errors.map((e: any) => e.path),
        query,
      ).toContain(path);
    }
    expect((await analytics("?from=2025-01-01&to=2026-01-01")).res.status).toBe(200);
  });

  it("reads at most 3 D1 statements and never the attempts table", async () => {
    const query = `?from=${daysAgo(30)}&to=${today}&granularity=week&group=Class%207a`;
    const before = await analytics(query);
    // The benchmarks' D1 meter around the worker counts the request's statements.
    const metered = await fetchWorker(
      new Request(new URL(`/api/institutions/${tenant.institution.id}/analytics${query}`, BASE), {
        headers: { Authorization: `Bearer ${tenant.admin.token}` },
      }),
      env,
      createExecutionContext(),
      withD1Meter(worker),
    );
    expect(metered.status).toBe(200);
    await metered.arrayBuffer();
    const statements = metered.headers.get("X-D1-Queries");
    expect(statements).toMatch(/^\d+$/);
    expect(Number(statements)).toBeGreaterThanOrEqual(1);
    expect(Number(statements)).toBeLessThanOrEqual(3);
    // With the attempts table out of the way the answer is the same.
    await env.DB.prepare("ALTER TABLE attempts RENAME TO attempts_hidden").run();
    try {
      const without = await analytics(query);
      expect(without.res.status).toBe(200);
      expect(figures(without.body)).toEqual(figures(before.body));
    } finally {
      await env.DB.prepare("ALTER TABLE attempts_hidden RENAME TO attempts").run();
    }
  });

  it("the back-fill migration rebuilds the same rollups from the recorded attempts", async () => {
    const queries = [
      `?from=${daysAgo(45)}&to=${today}`,
      `?from=${daysAgo(100)}&to=${daysAgo(2)}&granularity=week`,
      `?from=${daysAgo(365)}&to=${today}&granularity=month`,
      `?from=${daysAgo(45)}&to=${today}&group=Class%207b`,
    ];
    const before = await Promise.all(queries.map(async (q) => figures((await analytics(q)).body)));
    await db()
      .delete(institutionActivityDays)
      .where(eq(institutionActivityDays.institutionNumber, institutionNumberOf(tenant.institution.id)));
    for (const table of [
      institutionActivityTotals,
      institutionLearnerCourses,
      institutionMemberCounts,
      institutionCefrCounts,
    ])
      await db().delete(table).where(eq(table.institutionId, tenant.institution.id));
    const emptied = (await analytics(queries[0] as string)).body;
    expect(emptied.totals).toMatchObject({ members: 0, attempts: 0, active_learners: 0 });
    // The back-fill is written for the tables as they were then (by ids, rowid tables): both are put
    // back in that shape, the back-fill run, then the migrations since, which rebuild them as they are
    // now, each re-creating the triggers as they are at its time, keeping every row.
    const former = tablesAsBackfillWants(env.TEST_MIGRATIONS);
    const formerDdl = former.filter((q) =>
      /^CREATE (TABLE|INDEX) `(institution_activity_days|lesson_progress)/.test(q),
    );
    expect(formerDdl).toHaveLength(5);
    await env.DB.batch(former.map((q) => env.DB.prepare(q)));
    for (const statement of migrationNamed(env.TEST_MIGRATIONS, "_backfill_institution_analytics.sql"))
      await env.DB.prepare(statement).run();
    for (const suffix of MIGRATIONS_SINCE_BACKFILL)
      await env.DB.batch(migrationNamed(env.TEST_MIGRATIONS, suffix).map((q) => env.DB.prepare(q)));
    for (const [i, q] of queries.entries()) expect(figures((await analytics(q)).body), q).toEqual(before[i]);
    await expectExact(daysAgo(100), daysAgo(2), "month");
  });
});

describe("analytics: exact for every range shape", () => {
  it("whole months, partial weeks and months at both ends, single periods, ranges ending in the past", async () => {
    const shapes: [string, string][] = [
      [daysAgo(100), daysAgo(2)], // whole months read from month rows, edges from days
      [daysAgo(45), today],
      [daysAgo(41), daysAgo(5)], // ends in the past: pairs active before and after need a probe
      [daysAgo(11), daysAgo(9)], // inside one week or month: the range is the one period
      [daysAgo(10), daysAgo(10)],
      [daysAgo(365), today],
      // Partial periods of one day (read from that day's row): a Sunday to a Monday, a month's last day to a first.
      [dayAgoWhere(40, (d) => d.getUTCDay() === 0), dayAgoWhere(2, (d) => d.getUTCDay() === 1)],
      [dayAgoWhere(32, (d) => d.getUTCDate() === 1, -1), dayAgoWhere(1, (d) => d.getUTCDate() === 1)],
    ];
    for (const [from, to] of shapes)
      for (const granularity of ["day", "week", "month"] as const) await expectExact(from, to, granularity);
    for (const group of ["Class 7a", "Class 7b", "Chess club"])
      await expectExact(daysAgo(45), today, "week", group);
  });

  it("a member changing groups: a group's figures are those of its members now, all of their activity", async () => {
    const l2 = learners[2] as TestUser;
    const move = async (fromGroup: string, toGroup: string) => {
      await db()
        .delete(memberGroups)
        .where(and(eq(memberGroups.userId, l2.id), eq(memberGroups.groupName, fromGroup)));
      await db()
        .insert(memberGroups)
        .values({ institutionId: tenant.institution.id, userId: l2.id, groupName: toGroup });
    };
    const before = (await analytics(`?from=${daysAgo(30)}&to=${today}`)).body;
    await move("Class 7b", "Class 7a");
    try {
      const body = await expectExact(daysAgo(30), today, "day");
      const named = (b: any, name: string) => b.groups.find((g: any) => g.name === name);
      // l2's practice (2 attempts on each of 4 days) moved with them, from before the move as well.
      expect(named(body, "Class 7a").attempts).toBe(named(before, "Class 7a").attempts + 8);
      expect(named(body, "Class 7b").attempts).toBe(named(before, "Class 7b").attempts - 8);
      expect(named(body, "Class 7a").members).toBe(named(before, "Class 7a").members + 1);
      await expectExact(daysAgo(45), today, "month", "Class 7a");
      // The whole institution does not change.
      expect(body.totals).toEqual(before.totals);
    } finally {
      await move("Class 7a", "Class 7b");
    }
    expect(figures((await analytics(`?from=${daysAgo(30)}&to=${today}`)).body)).toEqual(figures(before));
  });

  it("concurrent recordings of one learner and of several, and the same batch sent twice at once, count once each", async () => {
    const [c1, c2] = courses as [CourseFixture, CourseFixture];
    const [, l1, , l3, l4] = learners as TestUser[];
    const batch = (items: string[], day: string, minute: number) =>
      items.map((itemId, i) => ({
        id: crypto.randomUUID(),
        training_item_id: itemId,
        score: 1,
        correct: true,
        duration_seconds: 20 + i,
        occurred_at: `${day}T11:${String(minute + i).padStart(2, "0")}:00Z`,
      }));
    const twice = batch(c1.items.slice(0, 2), daysAgo(50), 0);
    const sends = [
      { user: l1 as TestUser, attempts: batch(c2.items.slice(0, 2), daysAgo(50), 10) },
      { user: l1 as TestUser, attempts: batch(c1.items.slice(0, 1), daysAgo(50), 20) },
      { user: l3 as TestUser, attempts: batch(c2.items.slice(0, 3), daysAgo(50), 30) },
      { user: l4 as TestUser, attempts: twice },
      { user: l4 as TestUser, attempts: twice },
    ];
    const results = await Promise.all(
      sends.map(({ user, attempts }) =>
        callJson("/api/progress/attempts", { token: user.token, body: { attempts } }),
      ),
    );
    for (const { res, body } of results) expect(res.status, JSON.stringify(body)).toBe(200);
    const recorded = results.reduce((sum, r) => sum + r.body.summary.recorded, 0);
    expect(recorded).toBe(2 + 1 + 3 + 2);
    for (const granularity of ["day", "week", "month"] as const)
      await expectExact(daysAgo(60), today, granularity);
    await expectExact(daysAgo(60), daysAgo(40), "day", "Class 7a");
  });
});

describe("analytics: ETag, 304 and Cache-Control", () => {
  const metered = (path: string, headers: Record<string, string>) =>
    fetchWorker(
      new Request(new URL(path, BASE), {
        headers: { Authorization: `Bearer ${tenant.admin.token}`, ...headers },
      }),
      env,
      createExecutionContext(),
      withD1Meter(worker),
    );

  it("a past range: no-cache, and its ETag answers 304 from one statement without reading the rollups", async () => {
    const path = `/api/institutions/${tenant.institution.id}/analytics?from=${daysAgo(20)}&to=${daysAgo(1)}&granularity=week`;
    const first = await metered(path, {});
    expect(first.status).toBe(200);
    const body = (await first.json()) as any;
    expect(body.generated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const etag = first.headers.get("ETag") as string;
    expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/);
    expect(first.headers.get("Cache-Control")).toBe("private, no-cache");
    const again = await metered(path, { "If-None-Match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("ETag")).toBe(etag);
    expect(again.headers.get("Cache-Control")).toBe("private, no-cache");
    expect(again.headers.get("X-D1-Queries")).toBe("1");
    // The institution's row and its revisions, nothing of the rollups.
    expect(Number(again.headers.get("X-D1-Rows-Read"))).toBeLessThan(20);
    // A list of validators, weak or strong, and `*`, as RFC 9110 compares them.
    expect((await metered(path, { "If-None-Match": `"x", ${etag.slice(2)}` })).status).toBe(304);
    expect((await metered(path, { "If-None-Match": "*" })).status).toBe(304);
    expect((await metered(path, { "If-None-Match": 'W/"0"' })).status).toBe(200);
  });

  it("a range with today: max-age=60; the ETag changes with a late recording, a group move and the branding", async () => {
    const { res } = await analytics(`?from=${daysAgo(6)}`);
    expect(res.headers.get("Cache-Control")).toBe("private, max-age=60");
    const path = `?from=${daysAgo(20)}&to=${daysAgo(1)}`;
    const etag = async () => (await analytics(path)).res.headers.get("ETag");
    const seen = new Set([await etag()]);
    // A late recording (an offline app syncing) for a day inside the past range.
    const [c1] = courses as [CourseFixture];
    await practise(learners[4] as TestUser, daysAgo(7), c1.items.slice(2, 3));
    const late = await etag();
    expect(seen.has(late)).toBe(false);
    seen.add(late);
    const moved = {
      institutionId: tenant.institution.id,
      userId: (learners[4] as TestUser).id,
      groupName: "Debate",
    };
    await db().insert(memberGroups).values(moved);
    const joined = await etag();
    expect(seen.has(joined)).toBe(false);
    seen.add(joined);
    await db()
      .delete(memberGroups)
      .where(and(eq(memberGroups.userId, moved.userId), eq(memberGroups.groupName, "Debate")));
    await db()
      .update(institutions)
      .set({ branding: { display_name: "Acme Academy", primary_color: "#445566" } })
      .where(eq(institutions.id, tenant.institution.id));
    const rebranded = await etag();
    expect(seen.has(rebranded)).toBe(false);
    await db()
      .update(institutions)
      .set({ branding: { display_name: "Acme Academy", primary_color: "#112233" } })
      .where(eq(institutions.id, tenant.institution.id));
    // Nothing changed since: the same validator, and the 304.
    const stable = await etag();
    const repeat = await analytics(path, tenant.admin.token, { headers: { "If-None-Match": stable } });
    expect(repeat.res.status).toBe(304);
    await expectExact(daysAgo(20), daysAgo(1), "week");
  });
});

describe("analytics: the rollup under resends", () => {
  it("a resent batch counts once, a new one at once", async () => {
    const query = `?from=${daysAgo(3)}&to=${today}`;
    const before = await analytics(query);
    const [c1] = courses as [CourseFixture];
    const user = learners[4] as TestUser;
    const sent = await practise(user, daysAgo(2), c1.items.slice(0, 2), { seconds: 50 });
    const after = await analytics(query);
    expect(after.body.totals.attempts).toBe(before.body.totals.attempts + 2);
    expect(after.body.totals.active_learners).toBe(before.body.totals.active_learners + 1);
    const resent = await callJson("/api/progress/attempts", { token: user.token, body: { attempts: sent } });
    expect(resent.body.summary.duplicates).toBe(2);
    expect(figures((await analytics(query)).body)).toEqual(figures(after.body));
  });
});

describe("analytics: tenancy and abilities", () => {
  it("another institution's id is 404; instructors and learners lack analytics:read; staff read any", async () => {
    const staff = await createPlatformAdmin();
    const foreign = await callJson(`/api/institutions/${tenant.institution.id}/analytics`, {
      token: other.admin.token,
    });
    expect(foreign.res.status).toBe(404);
    for (const user of [tenant.instructor, tenant.learner]) {
      const { res, body } = await analytics("", user.token);
      expect(res.status).toBe(403);
      expect(body.detail).toContain("analytics:read");
    }
    expect((await analytics("", staff.token)).res.status).toBe(200);
    expect(
      (await callJson("/api/institutions/ins_unknown/analytics", { token: staff.token })).res.status,
    ).toBe(404);
  });
});
