import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { expect, it } from "vitest";
import { weeklyXp, xpRankCounts } from "../../src/db/schema";
import { addDays, weekOf } from "../../src/domains/progress/rules";
import worker from "../../src/index";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant } from "../helpers/tenants";
import { attempt, learnerIn, record, today } from "./reads/support";

async function sweep(now: number) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: now, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

async function weeksStored() {
  const db = database(env.DB);
  const rows = await db.selectDistinct({ week: weeklyXp.week }).from(weeklyXp).orderBy(weeklyXp.week);
  const counts = await db
    .select({
      period: xpRankCounts.period,
      scope: xpRankCounts.scope,
      level: xpRankCounts.level,
      bucket: xpRankCounts.bucket,
      learners: xpRankCounts.learners,
    })
    .from(xpRankCounts)
    .orderBy(xpRankCounts.period, xpRankCounts.scope, xpRankCounts.level, xpRankCounts.bucket);
  return { weeks: rows.map((r) => r.week), counts };
}

it("the minute sweep deletes weekly XP and rank counts of weeks no reader can ask for, and nothing else", async () => {
  const { learner, institution } = await createTenant();
  const other = await learnerIn(institution.id, { name: "Other" });
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 4, xp: 10 });
  const thisWeek = weekOf(today());
  const at = (daysAgo: number) => `${addDays(today(), -daysAgo)}T12:00:00Z`;
  // Five weeks ago, last week and this week; the other learner only five weeks ago.
  await record(learner.token, [
    attempt(course.items[0]!, { at: at(35) }),
    attempt(course.items[1]!, { at: at(7) }),
    attempt(course.items[2]!),
  ]);
  await record(other.token, [attempt(course.items[0]!, { at: at(35) })]);
  const oldWeek = weekOf(addDays(today(), -35));
  const lastWeek = weekOf(addDays(today(), -7));

  const before = await weeksStored();
  expect(before.weeks).toEqual([oldWeek, lastWeek, thisWeek]);
  expect(before.counts.some((c) => c.period === oldWeek)).toBe(true);
  const boardBefore = await callJson("/api/gamification/leaderboard?period=week", { token: learner.token });
  const allTimeBefore = await callJson("/api/gamification/leaderboard?period=all_time", {
    token: learner.token,
  });
  const statsBefore = await callJson("/api/gamification/stats", { token: learner.token });

  await sweep(Date.now());

  const after = await weeksStored();
  expect(after.weeks).toEqual([lastWeek, thisWeek]);
  expect(after.counts).toEqual(before.counts.filter((c) => c.period !== oldWeek));
  expect(
    (await callJson("/api/gamification/leaderboard?period=week", { token: learner.token })).body,
  ).toEqual(boardBefore.body);
  expect(
    (await callJson("/api/gamification/leaderboard?period=all_time", { token: learner.token })).body,
  ).toEqual(allTimeBefore.body);
  expect((await callJson("/api/gamification/stats", { token: learner.token })).body).toEqual(
    statsBefore.body,
  );

  // Running again changes nothing; an attempt back-dated into the purged week is recorded and counted there, until the next run.
  await sweep(Date.now());
  expect(await weeksStored()).toEqual(after);
  const backDatedWeek = weekOf(addDays(today(), -36));
  await record(learner.token, [attempt(course.items[3]!, { at: at(36) })]);
  const backDated = await weeksStored();
  expect(backDated.weeks).toEqual([backDatedWeek, lastWeek, thisWeek]);
  expect(backDated.counts.some((c) => c.period === backDatedWeek)).toBe(true);
  await sweep(Date.now());
  const swept = await weeksStored();
  expect(swept.weeks).toEqual([lastWeek, thisWeek]);
  expect(swept.counts).toEqual(backDated.counts.filter((c) => c.period !== backDatedWeek));
});
