import { env } from "cloudflare:test";
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { courseNumberOf, institutionNumberOf, userNumberOf } from "../../src/db/numbers";
import {
  courses,
  institutionActivityDays,
  institutions,
  learnerStats,
  memberGroups,
  ssoDomains,
  users,
} from "../../src/db/schema";
import { splitRange } from "../../src/domains/institutions/analytics/range";
import {
  type ActivityRow,
  groupActivityStatement,
  groupMembersStatement,
  type MembersRow,
  type RollupPlan,
  type RollupRow,
  revisionsColumn,
  rollupStatement,
} from "../../src/domains/institutions/analytics/sql";
import {
  beyondInListOrder,
  MEMBER_COUNT,
  nameOrSlugContains,
  SORT_NAME,
} from "../../src/domains/institutions/sql";
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

function run<T>(query: ReturnType<typeof rollupStatement>) {
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

describe("SORT_NAME and beyondInListOrder", () => {
  it("order by lower-case name then id, and keep the rows strictly after or before a key", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    // "Beta" and "beta" tie on the sort name; ids break the tie.
    const rows = [
      await seedInstitution(`${tag} beta`, []),
      await seedInstitution(`${tag} Alpha`, []),
      await seedInstitution(`${tag} Beta`, []),
      await seedInstitution(`${tag} gamma`, []),
    ];
    const ids = rows.map((r) => r.id);
    const listed = async (condition?: ReturnType<typeof beyondInListOrder>, descending = false) =>
      (
        await db()
          .select({ id: institutions.id, sortName: SORT_NAME })
          .from(institutions)
          .where(and(inArray(institutions.id, ids), condition))
          .orderBy(
            descending ? desc(SORT_NAME) : asc(SORT_NAME),
            descending ? desc(institutions.id) : asc(institutions.id),
          )
      ).map((r) => ({ id: r.id, sortName: r.sortName }));
    const all = await listed();
    const [beta1, beta2] = [ids[0], ids[2]].sort() as [string, string];
    expect(all.map((r) => r.id)).toEqual([ids[1], beta1, beta2, ids[3]]);
    expect(all.map((r) => r.sortName)).toEqual([
      `${tag} alpha`,
      `${tag} beta`,
      `${tag} beta`,
      `${tag} gamma`,
    ]);
    const key = [`${tag} beta`, beta1] as const;
    expect((await listed(beyondInListOrder("after", key))).map((r) => r.id)).toEqual([beta2, ids[3]]);
    expect((await listed(beyondInListOrder("before", key), true)).map((r) => r.id)).toEqual([ids[1]]);
    const statement = dialect.sqlToQuery(beyondInListOrder("after", key));
    expect(statement.params).toEqual([key[0], key[0], key[1]]);
  });
});

describe("groupMembersStatement", () => {
  it("answers one group's members, learners and their CEFR levels per key", async () => {
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
    const filter = { institutionId: id, from: "2026-01-01", to: "2026-01-31", group: "7b" };
    const [group] = (await run<MembersRow>(groupMembersStatement(filter))).results;
    expect(group).toMatchObject({ members: 2, learners: 1 });
    expect(JSON.parse(group!.cefr)).toEqual([["overall", "A2", 1]]);
  });
});

/** An institution with two learners (l1 in group `g`), two courses and rollup rows written through drizzle. */
async function seedActivity() {
  const { id, ids } = await seedInstitution("Activity", [
    { role: "learner", cefr: { overall: "A1" } },
    { role: "learner" },
    { role: "instructor" },
  ]);
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
    institutionNumber: institutionNumberOf(id),
    day: d,
    userNumber: userNumberOf(userId),
    courseNumber: courseNumberOf(courseId),
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
      // Outside the range of the checks.
      day("2026-02-28", l1, c2),
      day("2026-04-20", l2, c2),
    ]);
  return { id, l1, l2, c1, c2 };
}

describe("groupActivityStatement", () => {
  it("sums the group's members' rows in the range: totals, a row per period, the top courses", async () => {
    const { id, c1 } = await seedActivity();
    const filter = { institutionId: id, from: "2026-03-01", to: "2026-03-10", group: "g" };
    const rows = (await run<ActivityRow>(groupActivityStatement(filter, "week"))).results;
    const of = (kind: ActivityRow["kind"]) => rows.filter((r) => r.kind === kind);
    expect(of("total")).toEqual([
      expect.objectContaining({
        k: null,
        learners: 1,
        seconds: 120,
        attempts: 4,
        lessons: 1,
        courses: 1,
        xp: 20,
      }),
    ]);
    expect(Object.fromEntries(of("series").map((r) => [r.k, r.attempts]))).toEqual({ "2026-03-02": 4 });
    expect(of("course")).toEqual([
      expect.objectContaining({ k: c1, learners: 1, courses: 1, title: `Course ${c1}` }),
    ]);
  });
});

describe("rollupStatement (over the rollups the triggers keep)", () => {
  const plan = (id: string, from: string, to: string, granularity: "day" | "week" | "month"): RollupPlan => ({
    institutionId: id,
    from,
    to,
    granularity,
    ...splitRange(from, to, granularity),
  });
  const read = async (p: RollupPlan) => {
    const [row] = (await run<RollupRow>(rollupStatement(p))).results;
    return Object.fromEntries(Object.entries(row as RollupRow).map(([k, v]) => [k, JSON.parse(v)]));
  };
  const sorted = (rows: unknown[][]) => [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])));

  it("answers members, CEFR counts, day rows, period counters, course and group sums, distinct learners", async () => {
    const { id, c1, c2 } = await seedActivity();
    // 2026-03-01 is a Sunday: the first week is partial, and so is the last (to a Tuesday).
    const row = await read(plan(id, "2026-03-01", "2026-03-10", "week"));
    expect(sorted(row.members)).toEqual([
      ["", 3, 2],
      ["g", 1, 0],
    ]);
    expect(row.cefr).toEqual([["overall", "A1", 1]]);
    expect(sorted(row.days)).toEqual([
      ["2026-03-02", 1, 2, 60, 10, 1, 0],
      ["2026-03-03", 2, 4, 120, 20, 0, 1],
      ["2026-03-09", 1, 2, 60, 10, 0, 0],
    ]);
    // Whole weeks' distinct learners; the week of 2026-02-23 counts l1's 28 February.
    expect(sorted(row.periods)).toEqual([
      ["2026-02-23", 1],
      ["2026-03-02", 2],
      ["2026-03-09", 1],
    ]);
    expect(sorted(row.courses)).toEqual(
      sorted([
        [c1, 6, 180, 30, 1, 1],
        [c2, 2, 60, 10, 0, 0],
      ]),
    );
    expect(row.groups).toEqual([["g", 4, 120, 20, 1, 1]]);
    // Per list of groups and of courses: l1 (group g, c1), l2 (no group, c1 and c2); nobody on the 1st
    // (the first partial week); l2 on the 9th–10th (the last).
    const [ungrouped, grouped] = sorted(row.learners) as [string, string, number, number, number][];
    expect(ungrouped).toEqual(["", [c1, c2].sort().join("\u001f"), 1, 0, 1]);
    expect(grouped).toEqual(["g", c1, 1, 0, 0]);
    expect(sorted(row.titles)).toEqual(
      sorted([
        [c1, `Course ${c1}`, expect.any(String)],
        [c2, `Course ${c2}`, expect.any(String)],
      ]),
    );
  });

  it("probes a pair whose first and last day lie on both sides of a range, and reads whole months from month rows", async () => {
    const { id, c2 } = await seedActivity();
    // l2's c2 pair spans 03-03..04-20 with nothing between 03-10 and 04-19; l1's spans 02-28..03-03.
    const gap = await read(plan(id, "2026-03-10", "2026-04-19", "day"));
    expect(gap.learners).toEqual([]);
    const spring = await read(plan(id, "2026-02-15", "2026-04-30", "month"));
    // February is partial (l1 on the 28th), April whole: its counter says l2.
    const learners = spring.learners as [string, string, number, number, number][];
    expect(learners.reduce((sum, r) => sum + r[2], 0)).toBe(2);
    expect(learners.reduce((sum, r) => sum + r[3], 0)).toBe(1);
    expect(learners.reduce((sum, r) => sum + r[4], 0)).toBe(0);
    expect(sorted(spring.periods)).toEqual([
      ["2026-02-01", 1],
      ["2026-03-01", 2],
      ["2026-04-01", 1],
    ]);
    // March is whole: its month rows; February and April from day rows.
    expect(sorted(spring.courses).find((c) => c[0] === c2)).toEqual([c2, 6, 180, 30, 0, 0]);
  });

  it("keeps the counts of members and levels as users, groups and levels change", async () => {
    const { id, l1, l2 } = await seedActivity();
    const counts = async () => {
      const row = await read(plan(id, "2026-03-01", "2026-03-01", "day"));
      return { members: sorted(row.members), cefr: sorted(row.cefr) };
    };
    await db()
      .update(learnerStats)
      .set({ cefrLevels: { overall: "A2", reading: "A1" } })
      .where(eq(learnerStats.userId, l1));
    await db().update(users).set({ role: "instructor" }).where(eq(users.id, l2));
    await db().delete(memberGroups).where(eq(memberGroups.userId, l1));
    expect(await counts()).toEqual({
      members: [["", 3, 1]],
      cefr: [
        ["overall", "A2", 1],
        ["reading", "A1", 1],
      ],
    });
    await db().update(users).set({ role: "instructor" }).where(eq(users.id, l1));
    expect(await counts()).toEqual({ members: [["", 3, 0]], cefr: [] });
    await db().update(users).set({ institutionId: null }).where(eq(users.id, l2));
    expect((await counts()).members).toEqual([["", 2, 0]]);
  });
});

describe("revisionsColumn", () => {
  it("raises the revision of a month with each change of its activity, and the members' with theirs", async () => {
    const { id, l1, c1 } = await seedActivity();
    const revisions = async () => {
      const [row] = await db()
        .select({ revisions: revisionsColumn(institutions.id) })
        .from(institutions)
        .where(eq(institutions.id, id));
      return new Map(JSON.parse(row!.revisions) as [string, number][]);
    };
    const before = await revisions();
    expect([...before.keys()].sort()).toEqual(["", "2026-02", "2026-03", "2026-04"]);
    await db()
      .update(institutionActivityDays)
      .set({ attempts: 5 })
      .where(
        and(
          eq(institutionActivityDays.userNumber, userNumberOf(l1)),
          eq(institutionActivityDays.courseNumber, courseNumberOf(c1)),
          eq(institutionActivityDays.day, "2026-03-02"),
        ),
      );
    const after = await revisions();
    expect(after.get("2026-03")).toBe((before.get("2026-03") ?? 0) + 1);
    expect(after.get("2026-02")).toBe(before.get("2026-02"));
    expect(after.get("")).toBe(before.get(""));
    await db().insert(memberGroups).values({ institutionId: id, userId: l1, groupName: "h" });
    expect((await revisions()).get("")).toBe((before.get("") ?? 0) + 1);
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
