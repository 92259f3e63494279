import { env } from "cloudflare:test";
import { and, count, eq, gt } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { learnerStats, weeklyXp } from "../../../src/db/schema";
import { RANK_BASE, RANK_LEVELS } from "../../../src/domains/progress/rank";
import { addDays, weekOf } from "../../../src/domains/progress/rules";
import { database } from "../../../src/platform/db";
import { callJson } from "../../helpers/api";
import { type CourseFixture, createPublishedCourse } from "../../helpers/progress-fixture";
import { createPlatformAdmin, createTenant, insertUser, type Tenant } from "../../helpers/tenants";
import { attempt, callInstrumented, learnerIn, queryPlans, record, today } from "./support";

/**
 * Exact ranks from the rank counts (xp_rank_counts), checked against a brute-force count in D1 for
 * every learner (drizzle counts), on the four boards (week / all time × institution / platform): at the top, in the
 * middle, at the bottom, in ties, at 0 XP, across bucket boundaries of base 16 and base 10, after
 * concurrent batches; and the rows a rank reads do not grow with the learners above.
 *
 * Learners are inserted straight into D1 and their attempts recorded by their institution's admin
 * (`user_id`), over HTTP like any client; ranks are read by the admin with `user_id`.
 */

type Period = "week" | "all_time";
type Scope = "institution" | "platform";
const BOARDS: [Period, Scope][] = [
  ["week", "institution"],
  ["week", "platform"],
  ["all_time", "institution"],
  ["all_time", "platform"],
];

/** Courses whose items are worth 1000, 100, 10 and 1 XP (18 items each): any XP up to 2 × 9,999 in one go. */
let denominations: { xp: number; course: CourseFixture }[];
let acme: Tenant;
let globex: Tenant;
const learners: { id: string; admin: Tenant; institutionId: string; used: Map<number, number> }[] = [];
let thisWeek: string;
const lastWeek = () => `${addDays(weekOf(today()), -3)}T12:00:00Z`;

beforeAll(async () => {
  thisWeek = weekOf(today());
  denominations = [];
  for (const xp of [1000, 100, 10, 1])
    denominations.push({
      xp,
      course: await createPublishedCourse({ lessons: 2, blocksPerLesson: 3, itemsPerBlock: 3, xp }),
    });
  acme = await createTenant({ plan: "enterprise", rateLimit: 1_000_000 });
  globex = await createTenant({ plan: "enterprise", rateLimit: 1_000_000 });
});

async function newLearner(tenant: Tenant) {
  const { id } = await insertUser("learner", tenant.institution.id);
  const learner = {
    id,
    admin: tenant,
    institutionId: tenant.institution.id,
    used: new Map<number, number>(),
  };
  learners.push(learner);
  return learner;
}

/** First passes of unused items adding up to `xp` (digit by digit), at `at`. */
function firstPasses(learner: (typeof learners)[number], xp: number, at?: string) {
  const out: ReturnType<typeof attempt>[] = [];
  let rest = xp;
  for (const { xp: worth, course } of denominations) {
    const n = Math.floor(rest / worth);
    rest -= n * worth;
    const from = learner.used.get(worth) ?? 0;
    if (from + n > course.items.length) throw new Error(`not enough items of ${worth} XP`);
    for (const id of course.items.slice(from, from + n)) out.push(attempt(id, at ? { at } : {}));
    learner.used.set(worth, from + n);
  }
  return out;
}

/** `n` practice passes (1 XP each) of an item the learner has completed, now. */
function practice(learner: (typeof learners)[number], n: number) {
  const [worth] = [...learner.used].find(([, count]) => count > 0)!;
  const item = denominations.find((d) => d.xp === worth)!.course.items[0]!;
  return Array.from({ length: n }, () => attempt(item));
}

async function recordFor(learner: (typeof learners)[number], attempts: ReturnType<typeof attempt>[]) {
  if (attempts.length === 0) return;
  await recordAs(learner.admin.admin.token, learner.id, attempts);
}

/** Records for a member, as their institution's admin. */
async function recordAs(adminToken: string, userId: string, attempts: ReturnType<typeof attempt>[]) {
  const { res, body } = await callJson("/api/progress/attempts", {
    token: adminToken,
    body: { user_id: userId, attempts },
  });
  if (res.status !== 200) throw new Error(`recording failed: ${res.status} ${JSON.stringify(body)}`);
}

/** A learner with `allTime` XP, `lastWeek` of it earned last week. */
async function learnerWith(tenant: Tenant, allTime: number, lastWeekXp = 0) {
  const learner = await newLearner(tenant);
  await recordFor(learner, firstPasses(learner, lastWeekXp, lastWeek()));
  await recordFor(learner, firstPasses(learner, allTime - lastWeekXp));
  return learner;
}

/** The learners of a board with more XP than `xp`, counted row by row through drizzle. */
async function learnersAbove(period: Period, scope: Scope, institutionId: string, xp: number) {
  const db = database(env.DB);
  const row =
    period === "all_time"
      ? await db
          .select({ n: count() })
          .from(learnerStats)
          .where(
            and(
              gt(learnerStats.xpTotal, xp),
              scope === "institution" ? eq(learnerStats.institutionId, institutionId) : undefined,
            ),
          )
          .get()
      : await db
          .select({ n: count() })
          .from(weeklyXp)
          .where(
            and(
              eq(weeklyXp.week, thisWeek),
              gt(weeklyXp.xp, xp),
              scope === "institution" ? eq(weeklyXp.institutionId, institutionId) : undefined,
            ),
          )
          .get();
  return row?.n ?? 0;
}

async function bruteForce(userId: string, institutionId: string, period: Period, scope: Scope) {
  const db = database(env.DB);
  const mine =
    period === "all_time"
      ? (
          await db
            .select({ xp: learnerStats.xpTotal })
            .from(learnerStats)
            .where(eq(learnerStats.userId, userId))
            .get()
        )?.xp
      : (
          await db
            .select({ xp: weeklyXp.xp })
            .from(weeklyXp)
            .where(and(eq(weeklyXp.week, thisWeek), eq(weeklyXp.userId, userId)))
            .get()
        )?.xp;
  const xp = mine ?? 0;
  return { xp, rank: (await learnersAbove(period, scope, institutionId, xp)) + 1 };
}

async function apiBoard(learner: (typeof learners)[number], period: Period, scope: Scope, limit = 100) {
  const { res, body } = await callJson(
    `/api/gamification/leaderboard?period=${period}&scope=${scope}&limit=${limit}&user_id=${learner.id}`,
    { token: learner.admin.admin.token },
  );
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** Every learner's rank and XP on every board, and the ranks of the listed entries, as a brute-force count gives them. */
async function expectExactRanks(subjects = learners) {
  for (const learner of subjects) {
    for (const [period, scope] of BOARDS) {
      const body = await apiBoard(learner, period, scope);
      const expected = await bruteForce(learner.id, learner.institutionId, period, scope);
      expect({ id: learner.id, period, scope, xp: body.me.xp, rank: body.me.rank }).toEqual({
        id: learner.id,
        period,
        scope,
        ...expected,
      });
      if (learner === subjects[0]) {
        for (const entry of body.entries) {
          expect(entry.rank).toBe((await learnersAbove(period, scope, learner.institutionId, entry.xp)) + 1);
        }
      }
    }
  }
}

/**
 * The maintained counts equal the migration's backfill recomputed from learner_stats and weekly_xp
 * now (rows whose count went back to 0 aside): maintenance and backfill agree, and nothing was lost.
 */
async function expectCountsMatchBackfill() {
  const migration = (env.TEST_MIGRATIONS as { name: string; queries: string[] }[]).find((m) =>
    m.name.startsWith("0006_"),
  )!;
  const backfill = migration.queries.find((q) => q.includes("INSERT INTO `xp_rank_counts`"))!;
  const select = backfill.replace(/^[\s\S]*?INSERT INTO `xp_rank_counts` \([^)]*\)\s*/, "");
  // Raw SQL on purpose: the oracle is the migration's own backfill statement, run as it is.
  const order = " ORDER BY 1, 2, 3, 4";
  const expected = await env.DB.prepare(`SELECT * FROM (${select.replace(/;\s*$/, "")})${order}`).raw();
  const maintained = await env.DB.prepare(
    `SELECT period, scope, level, bucket, learners FROM xp_rank_counts WHERE learners <> 0${order}`,
  ).raw();
  expect(expected.length).toBeGreaterThan(0);
  expect(maintained).toEqual(expected);
}

describe("leaderboard ranks from the rank counts", () => {
  it("are exact at the top, middle and bottom, in ties, at 0 XP, weekly and all time, institution and platform", async () => {
    await newLearner(acme); // no XP at all
    for (const xp of [1, 15, 16, 16, 17, 99, 100, 255, 256, 999, 1000, 4095, 4096, 9999])
      await learnerWith(acme, xp);
    await learnerWith(acme, 5000, 4000); // 1,000 this week
    await learnerWith(acme, 300, 300); // nothing this week
    await learnerWith(acme, 18000, 9000); // the top, all time
    for (const [xp, last] of [
      [7, 0],
      [256, 0],
      [4096, 0],
      [1000, 999],
    ] as const)
      await learnerWith(globex, xp, last);
    await expectExactRanks();
    await expectCountsMatchBackfill();
  });

  it("stay exact when learners cross a bucket boundary (base 16 and base 10)", async () => {
    for (const before of [15, 99, 255, 999, 4095]) {
      const [first] = await database(env.DB)
        .select({ userId: learnerStats.userId })
        .from(learnerStats)
        .where(and(eq(learnerStats.xpTotal, before), eq(learnerStats.institutionId, acme.institution.id)));
      const learner = learners.find((l) => l.id === first!.userId)!;
      await recordFor(learner, practice(learner, 1));
      expect((await bruteForce(learner.id, learner.institutionId, "all_time", "platform")).xp).toBe(
        before + 1,
      );
    }
    await expectExactRanks();
    await expectCountsMatchBackfill();
  });

  it("stay exact after concurrent batches of many learners", async () => {
    const fresh = await Promise.all(
      Array.from({ length: 24 }, (_, i) => newLearner(i % 3 === 0 ? globex : acme)),
    );
    // Every learner records three batches at once (the recorder serialises each learner's), all learners together.
    await Promise.all(
      fresh.flatMap((learner, i) => {
        const first = firstPasses(learner, 10 + ((i * 37) % 400));
        return [
          recordFor(learner, first).then(() =>
            Promise.all([
              recordFor(learner, practice(learner, 1 + (i % 5))),
              recordFor(learner, practice(learner, 16 - (i % 16))),
            ]),
          ),
        ];
      }),
    );
    // And the first learners again, concurrently with each other.
    await Promise.all(
      learners.slice(1, 12).map((learner, i) => recordFor(learner, practice(learner, 1 + i * 3))),
    );
    await expectExactRanks();
    await expectCountsMatchBackfill();
  });
});

describe("learners without an institution", () => {
  it("count on the platform boards only", async () => {
    const staff = await createPlatformAdmin();
    const learner = { id: staff.id, admin: acme, institutionId: "", used: new Map<number, number>() };
    await record(staff.token, firstPasses(learner, 256));
    await record(staff.token, practice(learner, 1)); // 257: just above the learners at 256
    for (const period of ["week", "all_time"] as const) {
      const { body } = await callJson(`/api/gamification/leaderboard?period=${period}&limit=100`, {
        token: staff.token,
      });
      expect(body.scope).toBe("platform");
      expect(body.me).toMatchObject({
        xp: 257,
        rank: (await bruteForce(staff.id, "", period, "platform")).rank,
      });
    }
    await expectExactRanks();
    await expectCountsMatchBackfill();
  });
});

describe("the cost of a rank", () => {
  // 520 learners and their attempts first: a long set-up, given twice its former 120 s budget now
  // that another test file shares its core.
  it("reads the page and a bounded number of counts, however many learners are above", async () => {
    const tenant = await createTenant({ plan: "enterprise", rateLimit: 1_000_000 });
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1, xp: 10 });
    const me = await learnerIn(tenant.institution.id);
    await record(me.token, [attempt(course.items[0]!)]); // 10 XP
    const paths = BOARDS.map(
      ([period, scope]) => `/api/gamification/leaderboard?period=${period}&scope=${scope}`,
    );

    const measure = async () => {
      const out: number[][] = [];
      for (const path of paths) {
        const { res, log } = await callInstrumented(path, me.token);
        expect(res.status).toBe(200);
        expect(log.roundTrips).toHaveLength(1);
        out.push(log.rowsReadByStatement);
        for (const { sql, plan } of await queryPlans(log)) {
          if (!sql.includes("xp_rank_counts")) continue;
          // One primary-key range per level, never a pass over the counts.
          expect(plan.join("\n"), sql).toMatch(
            /SEARCH c USING PRIMARY KEY \(period=\? AND scope=\? AND level=\? AND bucket>\? AND bucket<\?\)/,
          );
        }
      }
      return out;
    };
    // Learners above me, each with 11 to 109 XP (one batch of first passes worth 100, 10 and 1 XP,
    // at most 19 attempts), in my institution, this week.
    let added = 0;
    const addAbove = async (count: number) => {
      for (let done = 0; done < count; done += 25) {
        await Promise.all(
          Array.from({ length: Math.min(25, count - done) }, async () => {
            const n = added++;
            const { id } = await insertUser("learner", tenant.institution.id);
            const learner = { id, admin: tenant, institutionId: tenant.institution.id, used: new Map() };
            await recordAs(tenant.admin.token, id, firstPasses(learner, 11 + (n % 99)));
          }),
        );
      }
    };

    await addAbove(20); // a full first page
    const before = await measure();
    await addAbove(500);
    const after = await measure();
    for (const path of paths) {
      const { body } = await callJson(path, { token: me.token });
      expect(body.me.rank, path).toBeGreaterThan(520);
    }
    // The statements of a board: the top 10 (with its users), and my entry with the count above me,
    // which reads at most RANK_BASE − 1 counts per level, whatever the board's size.
    const bound = 2 * 10 + 2 + (RANK_BASE - 1) * RANK_LEVELS;
    paths.forEach((path, i) => {
      const [topBefore, meBefore] = before[i]!;
      const [topAfter, meAfter] = after[i]!;
      const what = `${path}: ${before[i]} → ${after[i]} rows`;
      expect(topAfter, what).toBe(topBefore);
      expect(meAfter! + topAfter!, what).toBeLessThanOrEqual(bound);
      // 500 more learners above, a handful more counts (new buckets within my ranges).
      expect(meAfter! - meBefore!, what).toBeLessThan(RANK_BASE);
    });
    console.log(
      JSON.stringify({ rowsRead: Object.fromEntries(paths.map((p, i) => [p, [before[i], after[i]]])) }),
    );
  }, 240_000);
});
