import { createExecutionContext, env } from "cloudflare:test";
import { and, eq, isNotNull } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { withD1Meter } from "../../scripts/bench/worker-wrappers.mjs";
import {
  attempts as attemptRows,
  courseProgress,
  institutionActivityDays,
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
  const rows = await db()
    .select({ user_id: table.userId, course_id: table.courseId, completedAt: table.completedAt })
    .from(table)
    .where(isNotNull(table.completedAt));
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
      expect(without.body).toEqual(before.body);
    } finally {
      await env.DB.prepare("ALTER TABLE attempts_hidden RENAME TO attempts").run();
    }
  });

  it("the back-fill migration rebuilds the same rollup from the recorded attempts", async () => {
    const query = `?from=${daysAgo(45)}&to=${today}`;
    const before = await analytics(query);
    await db()
      .delete(institutionActivityDays)
      .where(eq(institutionActivityDays.institutionId, tenant.institution.id));
    expect((await analytics(query)).body.totals.attempts).toBe(0);
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.includes("backfill_institution_activity"));
    expect(migration).toBeDefined();
    for (const statement of migration!.queries) await env.DB.prepare(statement).run();
    const after = await analytics(query);
    expect(after.body).toEqual(before.body);
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
    expect((await analytics(query)).body).toEqual(after.body);
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
