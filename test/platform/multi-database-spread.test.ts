import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { attempts } from "../../src/db/schema";
import { mergeTops } from "../../src/domains/progress/reports/gamification/platform-leaderboard";
import { database } from "../../src/platform/db";
import { FREEZE, THAW } from "../../src/platform/move/sql";
import { forgetPlacement } from "../../src/platform/service/directory";
import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import {
  createPlatformAdmin,
  createTenant,
  insertUser,
  signIn,
  type Tenant,
  type TestUser,
} from "../helpers/tenants";
import { attempt, record } from "../progress/reads/support";

/**
 * The platform-wide reads of progress across databases (docs/design/multi-database.md#platform-wide-reads):
 * the platform leaderboard merges every database's top and sums their counts of learners above;
 * platform staff reach a learner by `user_id` wherever the learner lives. Acme lives in DB, Globex in
 * DB_1; storage is per file, so these are every learner with XP on the platform.
 */
let acme: Tenant;
let globex: Tenant;
let staff: TestUser;
let items: string[];
let acmeSecond: TestUser;
let globexSecond: TestUser;

/** Another learner of the institution, in its database. */
async function learnerOf(tenant: Tenant, name: "DB" | "DB_1"): Promise<TestUser> {
  const { id, email } = await insertUser("learner", tenant.institution.id, undefined, name);
  return { id, email, role: "learner", ...(await signIn(email)) };
}

beforeAll(async () => {
  [acme, globex, staff] = await Promise.all([
    createTenant(),
    createTenant({ database: "DB_1" }),
    createPlatformAdmin(),
  ]);
  [acmeSecond, globexSecond] = await Promise.all([learnerOf(acme, "DB"), learnerOf(globex, "DB_1")]);
  const course = await createPublishedCourse({
    lessons: 1,
    blocksPerLesson: 1,
    itemsPerBlock: 6,
    xp: 10,
    databases: ["DB", "DB_1"],
  });
  items = course.items;
  const some = (n: number) => items.slice(0, n).map((id) => attempt(id));
  await record(acme.learner.token, some(3)); // 30 XP, in DB
  await record(globex.learner.token, some(5)); // 50 XP, in DB_1
  await record(globexSecond.token, some(2)); // 20 XP, in DB_1
  await record(acmeSecond.token, some(1)); // 10 XP, in DB
}, 60_000);

const board = (user: TestUser, query: string) =>
  callJson(`/api/gamification/leaderboard${query}`, { token: user.token });

describe("the platform leaderboard across databases", () => {
  for (const period of ["all_time", "week"]) {
    it(`ranks every database's learners together (${period})`, async () => {
      const mine = await board(acme.learner, `?scope=platform&period=${period}`);
      expect(mine.res.status, JSON.stringify(mine.body)).toBe(200);
      expect(mine.body.entries.map((e: any) => [e.rank, e.xp, e.is_me])).toEqual([
        [1, 50, false],
        [2, 30, true],
        [3, 20, false],
        [4, 10, false],
      ]);
      expect(mine.body.me).toMatchObject({ rank: 2, xp: 30 });
      // From DB_1: the learners of DB count above and below as well.
      const theirs = await board(globexSecond, `?scope=platform&period=${period}&limit=2`);
      expect(theirs.body.entries.map((e: any) => [e.rank, e.xp])).toEqual([
        [1, 50],
        [2, 30],
      ]);
      expect(theirs.body.me).toMatchObject({ rank: 3, xp: 20, user_id: globexSecond.id });
    });
  }

  it("answers platform staff about a learner of DB_1, names shown", async () => {
    const { res, body } = await board(staff, `?scope=platform&period=all_time&user_id=${globex.learner.id}`);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.me).toMatchObject({ rank: 1, xp: 50, user_id: globex.learner.id });
    expect(body.entries.map((e: any) => e.user_id)).toEqual([
      globex.learner.id,
      acme.learner.id,
      globexSecond.id,
      acmeSecond.id,
    ]);
    // The institution's own board stays in its database.
    const own = await board(staff, `?scope=institution&period=all_time&user_id=${globex.learner.id}`);
    expect(own.body.entries.map((e: any) => e.xp)).toEqual([50, 20]);
  });

  it("merges tops by most XP, then user id by code point, each learner once", () => {
    const row = (userId: string, xp: number) => ({
      userId,
      name: userId,
      institutionId: null,
      optOut: false,
      xp,
    });
    expect(
      mergeTops(
        [
          [row("usr_b", 30), row("usr_a", 10)],
          [row("usr_B", 30), row("usr_b", 30), row("usr_c", 20)],
        ],
        3,
      ).map((r) => r.userId),
    ).toEqual(["usr_B", "usr_b", "usr_c"]);
  });
});

describe("platform staff reading and recording a learner of DB_1 by user_id", () => {
  it("finds the learner in their database, reads and records there, and waits out a move's switch", async () => {
    const stats = await callJson(`/api/gamification/stats?user_id=${globex.learner.id}`, {
      token: staff.token,
    });
    expect(stats.res.status, JSON.stringify(stats.body)).toBe(200);
    expect(stats.body.xp_total).toBe(50);

    const sent = attempt(items[5] as string);
    const recordFor = () =>
      callJson("/api/progress/attempts", {
        token: staff.token,
        body: { user_id: globex.learner.id, attempts: [sent] },
      });
    const institutionId = globex.institution.id;
    await env.DB.prepare(FREEZE).bind(institutionId, "DB_1", new Date().toISOString()).run();
    forgetPlacement(institutionId);
    try {
      const refused = await recordFor();
      expect(refused.res.status).toBe(503);
      expect(refused.body.code).toBe("institution_moving");
    } finally {
      await env.DB.prepare(THAW).bind(institutionId, new Date().toISOString()).run();
      forgetPlacement(institutionId);
    }
    const recorded = await recordFor();
    expect(recorded.res.status, JSON.stringify(recorded.body)).toBe(200);
    const where = (name: "DB" | "DB_1") =>
      database(env[name]).select({ id: attempts.id }).from(attempts).where(eq(attempts.id, sent.id)).all();
    expect(await where("DB_1")).toHaveLength(1);
    expect(await where("DB")).toEqual([]);

    // An unknown id is 404 as before, after looking everywhere.
    const unknown = await callJson("/api/gamification/stats?user_id=usr_nobody", { token: staff.token });
    expect(unknown.res.status).toBe(404);
  });
});
