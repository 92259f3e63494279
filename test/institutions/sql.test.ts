import { env } from "cloudflare:test";
import { and, asc, eq, inArray } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import {
  courses,
  institutionActivityDays,
  institutions,
  learnerStats,
  memberGroups,
  ssoDomains,
  users,
} from "../../src/db/schema";
import {
  type ActivityRow,
  activityStatement,
  type Filter,
  type MembersRow,
  membersStatement,
} from "../../src/domains/institutions/analytics/sql";
import { MEMBER_COUNT, nameOrSlugContains } from "../../src/domains/institutions/sql";
import { claimStands } from "../../src/domains/institutions/sso/sql";
import { database } from "../../src/platform/db";

const db = () => database(env.DB);
const dialect = new SQLiteSyncDialect();
let sequence = 0;
const unique = (tag: string) => {
  sequence += 1;
  return `${tag}_sql_${sequence}_${crypto.randomUUID().slice(0, 8)}`;
};

/** An institution of its own, with members of the given roles (and learner stats for learners). */
async function seedInstitution(
  name: string,
  members: { role: "institution_admin" | "instructor" | "learner"; cefr?: Record<string, string> }[],
) {
  const id = unique("ins");
  await db()
    .insert(institutions)
    .values({ id, slug: id.toLowerCase().replace(/_/g, "-"), name });
  const ids: string[] = [];
  for (const member of members) {
    const userId = unique("usr");
    ids.push(userId);
    await db()
      .insert(users)
      .values({
        id: userId,
        email: `${userId}@sql.test`,
        name: userId,
        role: member.role,
        institutionId: id,
        passwordHash: "x",
      });
    if (member.cefr)
      await db().insert(learnerStats).values({
        userId,
        institutionId: id,
        xpTotal: 0,
        attempts: 0,
        correct: 0,
        seconds: 0,
        itemsCompleted: 0,
        lessonsCompleted: 0,
        coursesCompleted: 0,
        perfectLessons: 0,
        currentStreak: 0,
        longestStreak: 0,
        cefrLevels: member.cefr,
        updatedAt: "2026-01-01T00:00:00Z",
      });
  }
  return { id, ids };
}

async function seedCourse() {
  const id = unique("crs");
  await db()
    .insert(courses)
    .values({
      id,
      slug: id.toLowerCase().replace(/_/g, "-"),
      title: `Course ${id}`,
      description: "d",
      targetLanguage: "de",
      sourceLanguage: "en",
      cefrFrom: "A1",
      cefrTo: "A2",
    });
  return id;
}

function run<T>(query: ReturnType<typeof membersStatement>) {
  const { sql, params } = dialect.sqlToQuery(query);
  return env.DB.prepare(sql)
    .bind(...params)
    .all<T>();
}

describe("MEMBER_COUNT", () => {
  it("counts an institution's members of every role, per institution row", async () => {
    const a = await seedInstitution("Count A", [{ role: "learner" }, { role: "instructor" }]);
    const b = await seedInstitution("Count B", []);
    const rows = await db()
      .select({ id: institutions.id, members: MEMBER_COUNT })
      .from(institutions)
      .where(inArray(institutions.id, [a.id, b.id]));
    expect(Object.fromEntries(rows.map((r) => [r.id, r.members]))).toEqual({ [a.id]: 2, [b.id]: 0 });
  });
});

describe("nameOrSlugContains", () => {
  it("matches name in any case or slug, and LIKE wildcards only as themselves", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const plain = await seedInstitution(`Acme ${tag} Academy`, []);
    const percent = await seedInstitution(`Fifty 50% ${tag}`, []);
    const found = async (q: string) =>
      (
        await db()
          .select({ id: institutions.id })
          .from(institutions)
          .where(nameOrSlugContains(q))
          .orderBy(asc(institutions.id))
      )
        .map((r) => r.id)
        .filter((id) => id === plain.id || id === percent.id);
    expect(await found(`ACME ${tag}`)).toEqual([plain.id]);
    expect(await found(plain.id.slice(4).toLowerCase().replace(/_/g, "-"))).toEqual([plain.id]);
    expect(await found(`50% ${tag}`)).toEqual([percent.id]);
    // `%` and `_` in the search are not wildcards: neither name has "x%y" or "a_m".
    expect(await found("x%y")).toEqual([]);
    expect(await found("a_m")).toEqual([]);
  });
});

describe("membersStatement", () => {
  it("answers members, learners, CEFR levels per key and members per group, for the group only with one", async () => {
    const { id, ids } = await seedInstitution("Members", [
      { role: "institution_admin" },
      { role: "learner", cefr: { overall: "A2", reading: "B1" } },
      { role: "learner", cefr: { overall: "A2" } },
      { role: "learner" },
    ]);
    const [admin, l1, l2] = ids as [string, string, string, string];
    await db()
      .insert(memberGroups)
      .values([
        { institutionId: id, userId: l1, groupName: "7a" },
        { institutionId: id, userId: l2, groupName: "7b" },
        { institutionId: id, userId: admin, groupName: "7b" },
      ]);
    const all: Filter = { institutionId: id, from: "2026-01-01", to: "2026-01-31", group: null };
    const [row] = (await run<MembersRow>(membersStatement(all))).results;
    expect(row).toMatchObject({ members: 4, learners: 3 });
    expect(JSON.parse(row!.cefr).sort()).toEqual(
      [
        ["overall", "A2", 2],
        ["reading", "B1", 1],
      ].sort(),
    );
    expect(JSON.parse(row!.groups).sort()).toEqual([
      ["7a", 1],
      ["7b", 2],
    ]);
    const [group] = (await run<MembersRow>(membersStatement({ ...all, group: "7b" }))).results;
    expect(group).toMatchObject({ members: 2, learners: 1 });
    expect(JSON.parse(group!.cefr)).toEqual([["overall", "A2", 1]]);
    expect(JSON.parse(group!.groups)).toEqual([["7b", 2]]);
  });
});

describe("activityStatement", () => {
  it("sums the rollup in the range: totals, a row per period, the top courses and a row per group", async () => {
    const { id, ids } = await seedInstitution("Activity", [{ role: "learner" }, { role: "learner" }]);
    const [l1, l2] = ids as [string, string];
    const [c1, c2] = [await seedCourse(), await seedCourse()];
    await db()
      .insert(memberGroups)
      .values([{ institutionId: id, userId: l1, groupName: "g" }]);
    const day = (
      d: string,
      userId: string,
      courseId: string,
      extra: Partial<typeof institutionActivityDays.$inferInsert> = {},
    ) => ({
      institutionId: id,
      day: d,
      userId,
      courseId,
      attempts: 2,
      seconds: 60,
      xp: 10,
      lessonsCompleted: 0,
      coursesCompleted: 0,
      ...extra,
    });
    await db()
      .insert(institutionActivityDays)
      .values([
        day("2026-03-02", l1, c1, { lessonsCompleted: 1 }),
        day("2026-03-03", l1, c1, { coursesCompleted: 1 }),
        day("2026-03-03", l2, c2),
        day("2026-03-09", l2, c1),
        // Outside the range.
        day("2026-02-28", l1, c2),
      ]);
    const filter: Filter = { institutionId: id, from: "2026-03-01", to: "2026-03-10", group: null };
    const rows = (await run<ActivityRow>(activityStatement(filter, "week"))).results;
    const of = (kind: ActivityRow["kind"]) => rows.filter((r) => r.kind === kind);
    expect(of("total")).toEqual([
      expect.objectContaining({
        k: null,
        learners: 2,
        seconds: 240,
        attempts: 8,
        lessons: 1,
        courses: 1,
        xp: 40,
      }),
    ]);
    // Weeks start on Monday: 2026-02-23 (for the 1st), 2026-03-02, 2026-03-09.
    expect(Object.fromEntries(of("series").map((r) => [r.k, r.attempts]))).toEqual({
      "2026-03-02": 6,
      "2026-03-09": 2,
    });
    expect(
      of("course")
        .map((r) => ({ k: r.k, learners: r.learners, courses: r.courses, title: r.title }))
        .sort((a, b) => String(a.k).localeCompare(String(b.k))),
    ).toEqual(
      [
        { k: c1, learners: 2, courses: 1, title: `Course ${c1}` },
        { k: c2, learners: 1, courses: 0, title: `Course ${c2}` },
      ].sort((a, b) => a.k.localeCompare(b.k)),
    );
    expect(of("group")).toEqual([expect.objectContaining({ k: "g", learners: 1, attempts: 4 })]);
    const grouped = (await run<ActivityRow>(activityStatement({ ...filter, group: "g" }, "day"))).results;
    expect(grouped.filter((r) => r.kind === "total")).toEqual([
      expect.objectContaining({ learners: 1, attempts: 4, seconds: 120 }),
    ]);
    expect(
      grouped
        .filter((r) => r.kind === "series")
        .map((r) => r.k)
        .sort(),
    ).toEqual(["2026-03-02", "2026-03-03"]);
  });
});

describe("claimStands", () => {
  it("holds while the proven claim (institution, domain, token) is stored, and not once its token changed", async () => {
    const { id } = await seedInstitution("Claims", []);
    const domain = `${unique("d").toLowerCase().replace(/_/g, "-")}.example`;
    const now = "2026-01-01T00:00:00Z";
    await db()
      .insert(ssoDomains)
      .values({ institutionId: id, domain, token: "t1", status: "pending", createdAt: now, updatedAt: now });
    const stands = async (token: string) =>
      (
        await db()
          .select({ id: institutions.id })
          .from(institutions)
          .where(
            and(
              eq(institutions.id, id),
              claimStands(
                and(
                  eq(ssoDomains.institutionId, id),
                  eq(ssoDomains.domain, domain),
                  eq(ssoDomains.token, token),
                ),
              ),
            ),
          )
      ).length === 1;
    expect(await stands("t1")).toBe(true);
    expect(await stands("t2")).toBe(false);
    await db().update(ssoDomains).set({ token: "t2" }).where(eq(ssoDomains.domain, domain));
    expect(await stands("t1")).toBe(false);
  });
});
