import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { userNumberOf } from "../../src/db/numbers";
import { dailyActivity } from "../../src/db/schema";
import { addDays } from "../../src/domains/progress/rules";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant } from "../helpers/tenants";
import { attempt, learnerIn, outboxOf, record, today } from "./reads/support";

async function milestones(userId: string) {
  return (await outboxOf(userId, "streak.milestone")).map((r) => ({
    id: r.id,
    ...(r.payload as { user_id: string; days: number; day: string }),
  }));
}

const announced = async (userId: string) =>
  (await milestones(userId)).map(({ days, day }) => ({ days, day }));

describe("streak milestones", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("announces each milestone once when an offline sync makes the streak reach it, ending yesterday or today", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 10 });
    const day = today();
    const on = (daysAgo: number, item: number) =>
      attempt(course.items[item]!, { at: `${addDays(day, -daysAgo)}T12:00:00Z` });

    // Days −6 … −2: a run that has lapsed, so there is no current streak to announce.
    const lapsed = [6, 5, 4, 3, 2].map((daysAgo, i) => on(daysAgo, i));
    expect((await record(learner.token, lapsed)).summary.current_streak).toBe(0);
    expect(await milestones(learner.id)).toEqual([]);

    // Yesterday, synced late: the run −6 … −1 is current again and has passed 3 days (on day −4).
    const yesterday = on(1, 5);
    const synced = await record(learner.token, [yesterday]);
    expect(synced.summary.current_streak).toBe(6);
    const three = await milestones(learner.id);
    expect(three).toEqual([
      { id: expect.stringMatching(/^evt_/), user_id: learner.id, days: 3, day: addDays(day, -4) },
    ]);
    expect(synced.summary.events).toEqual([{ id: three[0]!.id, type: "streak.milestone" }]);

    // Day −7, back-filled: the run, still ending yesterday, reaches 7 days.
    const backFilled = on(7, 6);
    const seven = await record(learner.token, [backFilled]);
    expect(seven.summary).toMatchObject({ current_streak: 7, achievements_unlocked: ["streak_7"] });
    expect(await announced(learner.id)).toEqual([
      { days: 3, day: addDays(day, -4) },
      { days: 7, day: addDays(day, -1) },
    ]);

    // Today: 8 days, no milestone.
    const now = attempt(course.items[7]!);
    const eight = await record(learner.token, [now]);
    expect(eight.summary.current_streak).toBe(8);
    expect(eight.summary.events).toEqual([]);

    // Resending everything, at once and in the original batches, changes and announces nothing.
    const resent = await record(learner.token, [...lapsed, yesterday, backFilled, now]);
    expect(resent.summary).toMatchObject({ recorded: 0, duplicates: 8, current_streak: 8, events: [] });
    for (const batch of [lapsed, [yesterday], [backFilled], [now]])
      expect((await record(learner.token, batch)).summary.events).toEqual([]);
    expect(await milestones(learner.id)).toHaveLength(2);
    const stats = await callJson("/api/gamification/stats", { token: learner.token });
    expect(stats.body).toMatchObject({ current_streak: 8, longest_streak: 8, last_active_day: day });
  });

  it("announces what runs joined by a back-filled day newly reach, and never what either part announced", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 10 });
    const day = today();
    const on = (daysAgo: number, item: number) =>
      attempt(course.items[item]!, daysAgo === 0 ? {} : { at: `${addDays(day, -daysAgo)}T12:00:00Z` });
    const at = (daysAgo: number) => addDays(day, -daysAgo);

    // Today's run reaches 3 days; an older run −6 … −4 lies apart from it (−3 is missing).
    await record(learner.token, [on(2, 0), on(1, 1)]);
    await record(learner.token, [on(0, 2)]);
    expect(await announced(learner.id)).toEqual([{ days: 3, day: at(0) }]);
    await record(learner.token, [on(6, 3), on(5, 4), on(4, 5)]);
    expect(await announced(learner.id)).toHaveLength(1);

    // −3 joins them: 7 days, so 7 is new; 3 was announced by the part that ended today.
    const joined = await record(learner.token, [on(3, 6)]);
    expect(joined.summary.current_streak).toBe(7);
    expect(await announced(learner.id)).toEqual([
      { days: 3, day: at(0) },
      { days: 7, day: at(0) },
    ]);
    // Another day earlier, and another attempt today: nothing more.
    await record(learner.token, [on(7, 7)]);
    await record(learner.token, [on(0, 8)]);
    expect(await milestones(learner.id)).toHaveLength(2);
  });

  it("announces a milestone once when the attempt that reaches it is sent several times at once", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3 });
    const day = today();
    await record(learner.token, [
      attempt(course.items[0]!, { at: `${addDays(day, -2)}T12:00:00Z` }),
      attempt(course.items[1]!, { at: `${addDays(day, -1)}T12:00:00Z` }),
    ]);
    const reaching = attempt(course.items[2]!);
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        callJson("/api/progress/attempts", { token: learner.token, body: { attempts: [reaching] } }),
      ),
    );
    expect(results.map((r) => r.res.status)).toEqual([200, 200, 200, 200]);
    expect(results.map((r) => r.body.summary.current_streak)).toEqual([3, 3, 3, 3]);
    expect(await announced(learner.id)).toEqual([{ days: 3, day }]);
    const reported = results.flatMap((r) =>
      r.body.summary.events.filter((e: any) => e.type === "streak.milestone").map((e: any) => e.id),
    );
    expect(reported).toEqual([(await milestones(learner.id))[0]!.id]);
  });

  it("announces nothing twice for a streak longer than the active days the write path reads (400)", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 10 });
    const day = today();
    const days = Array.from({ length: 500 }, (_, i) => 499 - i);
    for (let from = 0; from < days.length; from += 100) {
      const batch = days
        .slice(from, from + 100)
        .map((daysAgo) =>
          attempt(
            course.items[daysAgo % 10]!,
            daysAgo === 0 ? {} : { at: `${addDays(day, -daysAgo)}T12:00:00Z` },
          ),
        );
      await record(learner.token, batch);
    }
    const start = addDays(day, -499);
    const expected = [3, 7, 14, 30, 60, 100, 365].map((days) => ({ days, day: addDays(start, days - 1) }));
    expect(await announced(learner.id)).toEqual(expected);
    const more = await record(learner.token, [attempt(course.items[0]!)]);
    expect(more.summary.events).toEqual([]);
    expect(await announced(learner.id)).toEqual(expected);
  });

  it("records an attempt a few minutes ahead of our clock at the learner's midnight on their today", async () => {
    // The server's clock at 23:58 in the learner's zone; the device's clock runs 4 minutes ahead (the API
    // allows 5), so the attempt claims 00:02 tomorrow.
    const day = today();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date(`${day}T23:58:00Z`));
    const { institution } = await createTenant();
    const learner = await learnerIn(institution.id, { timeZone: "UTC" });
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3 });
    await record(learner.token, [
      attempt(course.items[0]!, { at: `${addDays(day, -2)}T12:00:00Z` }),
      attempt(course.items[1]!, { at: `${addDays(day, -1)}T12:00:00Z` }),
    ]);

    const ahead = await record(learner.token, [
      attempt(course.items[2]!, { at: `${addDays(day, 1)}T00:02:00Z` }),
    ]);
    expect(ahead.summary.current_streak).toBe(3);
    expect(await announced(learner.id)).toEqual([{ days: 3, day }]);
    const stats = await callJson("/api/gamification/stats", { token: learner.token });
    expect(stats.body).toMatchObject({ current_streak: 3, longest_streak: 3, last_active_day: day });
    // Recorded as happening now, on the learner's today.
    const lesson = await callJson(`/api/courses/${course.courseId}/lesson-progress`, {
      token: learner.token,
    });
    expect(lesson.body.data[0]).toMatchObject({ status: "completed", completed_at: `${day}T23:58:00Z` });
    const days = await database(env.DB)
      .select({ day: dailyActivity.day })
      .from(dailyActivity)
      .where(eq(dailyActivity.userNumber, userNumberOf(learner.id)))
      .orderBy(dailyActivity.day);
    expect(days.map((r) => r.day)).toEqual([addDays(day, -2), addDays(day, -1), day]);

    // Three minutes later it is the next day, and the streak that ended yesterday is still current.
    vi.setSystemTime(new Date(`${addDays(day, 1)}T00:03:00Z`));
    expect((await callJson("/api/gamification/stats", { token: learner.token })).body).toMatchObject({
      current_streak: 3,
      last_active_day: day,
    });
  });
});
