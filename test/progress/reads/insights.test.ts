import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { courses } from "../../../src/db/schema";
import { addDays, localTime, weekOf } from "../../../src/domains/progress/rules";
import { database } from "../../../src/platform/db";
import { callJson } from "../../helpers/api";
import { createPublishedCourse } from "../../helpers/progress-fixture";
import { createTenant } from "../../helpers/tenants";
import { attempt, record, today } from "./support";

async function titleOf(courseId: string): Promise<string> {
  const course = await database(env.DB)
    .select({ title: courses.title })
    .from(courses)
    .where(eq(courses.id, courseId))
    .get();
  return course!.title;
}

const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

describe("GET /api/learning-insights", () => {
  it("ranks skills, fits the weekly accuracy trend, maps study time and recommends where to continue", async () => {
    const { learner } = await createTenant();
    // Course A, lesson by lesson: reading, grammar, listening.
    const a = await createPublishedCourse({
      lessons: 3,
      blocksPerLesson: 1,
      itemsPerBlock: 3,
      skills: ["reading", "grammar", "listening"],
    });
    const b = await createPublishedCourse({
      lessons: 2,
      blocksPerLesson: 1,
      itemsPerBlock: 2,
      skills: ["vocabulary"],
    });
    const [i0, i1, i2, i3, i4] = a.items;
    const now = Date.now();
    const lastWeek = `${addDays(today(), -7)}T10:15:00Z`;
    const thisWeek = now - 60_000;
    const old = (item: string, score: number, correct: boolean) =>
      attempt(item, { score, correct, at: lastWeek, duration_seconds: 60 });
    const recent = (item: string) => attempt(item, { at: thisWeek, duration_seconds: 30 });
    await record(learner.token, [
      old(i0!, 1, true),
      old(i0!, 0.2, false),
      old(i0!, 1, true),
      old(i1!, 0.5, false),
      old(i1!, 0.4, false),
      old(i1!, 1, true),
      old(i2!, 1, true),
      old(b.items[0]!, 1, true),
    ]);
    await record(learner.token, [recent(i3!), recent(i3!), recent(i3!), recent(i4!), recent(i4!)]);

    const { res, body } = await callJson("/api/learning-insights", { token: learner.token });
    expect(res.status).toBe(200);
    expect(body.user_id).toBe(learner.id);

    // Reading 6 attempts, mean score 5.2 / 6; grammar 5, 3.9 / 5; listening and vocabulary too few.
    const reading = { skill: "reading", attempts: 6, accuracy: 0.867 };
    const grammar = { skill: "grammar", attempts: 5, accuracy: 0.78 };
    expect(body.skills).toEqual({
      min_attempts: 5,
      ranked: [reading, grammar],
      strongest: reading,
      weakest: grammar,
    });

    // Last week 5 of 8 correct, this week 5 of 5: slope 0.375 a week.
    const current = weekOf(today());
    const weeks = Array.from({ length: 8 }, (_, i) => ({
      week: addDays(current, -7 * (7 - i)),
      attempts: 0,
      correct: 0,
      accuracy: null as number | null,
    }));
    weeks[6] = { ...weeks[6]!, attempts: 8, correct: 5, accuracy: 0.625 };
    weeks[7] = { ...weeks[7]!, attempts: 5, correct: 5, accuracy: 1 };
    expect(body.accuracy_trend).toEqual({ weeks, slope: 0.375, label: "improving" });

    const byWeekday = new Array(7).fill(0);
    const byHour = new Array(24).fill(0);
    for (const [at, minutes] of [
      [lastWeek, 8],
      [thisWeek, 2.5],
    ] as const) {
      const local = localTime(at, "UTC");
      byWeekday[local.weekday] += minutes;
      byHour[local.hour] += minutes;
    }
    expect(body.study_time).toEqual({
      total_minutes: 10.5,
      by_weekday: WEEKDAYS.map((weekday, i) => ({ weekday, minutes: byWeekday[i] })),
      by_hour: byHour.map((minutes, hour) => ({ hour, minutes })),
    });

    // A: lesson 1 completed, lesson 2 in progress → lesson 2. B: its first lesson is open. Most recent first.
    const [titleA, titleB] = [await titleOf(a.courseId), await titleOf(b.courseId)];
    expect(body.recommendations).toEqual([
      {
        course_id: a.courseId,
        course_title: titleA,
        lesson_id: a.lessons[1]!.id,
        lesson_title: "Lesson 2",
        position: 2,
        reason_code: "continue_course",
        reason: `continue ${titleA}: next lesson after Lesson 1`,
      },
      {
        course_id: b.courseId,
        course_title: titleB,
        lesson_id: b.lessons[0]!.id,
        lesson_title: "Lesson 1",
        position: 1,
        reason_code: "continue_course",
        reason: `continue ${titleB}: first lesson`,
      },
    ]);

    // --- A learner who completed their only course and is assessed at C1 gets courses covering C1.
    const writer = await createTenant();
    const w = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 5,
      skills: ["writing"],
      levels: ["A1", "A2", "B1", "B2", "C1"],
    });
    const y = await createPublishedCourse({
      lessons: 2,
      blocksPerLesson: 1,
      itemsPerBlock: 1,
      levels: ["C1"],
    });
    const z = await createPublishedCourse({
      lessons: 2,
      blocksPerLesson: 1,
      itemsPerBlock: 1,
      levels: ["B2", "C2"],
    });
    await createPublishedCourse({ lessons: 1, levels: ["C1"], published: false });
    await record(
      writer.learner.token,
      w.items.flatMap((item) => Array.from({ length: 10 }, () => attempt(item))),
    );
    const cefr = await callJson("/api/cefr/report", { token: writer.learner.token });
    expect(cefr.body.overall_level).toBe("C1");
    const levelled = await callJson("/api/learning-insights", { token: writer.learner.token });
    const [titleY, titleZ] = [await titleOf(y.courseId), await titleOf(z.courseId)];
    expect(levelled.body.recommendations).toEqual([
      {
        course_id: y.courseId,
        course_title: titleY,
        lesson_id: y.lessons[0]!.id,
        lesson_title: "Lesson 1",
        position: 1,
        reason_code: "matches_level",
        reason: "matches your level C1",
      },
      {
        course_id: z.courseId,
        course_title: titleZ,
        lesson_id: z.lessons[0]!.id,
        lesson_title: "Lesson 1",
        position: 1,
        reason_code: "matches_level",
        reason: "matches your level C1",
      },
    ]);

    // --- A learner with no activity: empty insights, and courses covering A1 (here A, B and W), by title.
    const fresh = await callJson("/api/learning-insights", { token: writer.instructor.token });
    expect(fresh.body.skills).toEqual({ min_attempts: 5, ranked: [], strongest: null, weakest: null });
    expect(fresh.body.accuracy_trend).toEqual({
      weeks: weeks.map((w_) => ({ ...w_, attempts: 0, correct: 0, accuracy: null })),
      slope: null,
      label: "steady",
    });
    expect(fresh.body.study_time.total_minutes).toBe(0);
    expect(fresh.body.study_time.by_weekday).toHaveLength(7);
    expect(fresh.body.study_time.by_hour).toHaveLength(24);
    const a1 = [
      { id: a.courseId, title: titleA, lesson: a.lessons[0]!.id },
      { id: b.courseId, title: titleB, lesson: b.lessons[0]!.id },
      { id: w.courseId, title: await titleOf(w.courseId), lesson: w.lessons[0]!.id },
    ].sort((p, q) => p.title.toLowerCase().localeCompare(q.title.toLowerCase()) || p.id.localeCompare(q.id));
    expect(fresh.body.recommendations).toEqual(
      a1.map((c) => ({
        course_id: c.id,
        course_title: c.title,
        lesson_id: c.lesson,
        lesson_title: "Lesson 1",
        position: 1,
        reason_code: "first_steps",
        reason: "a course for beginners: no CEFR level assessed yet",
      })),
    );

    // --- Levels come from all the evidence: reading and grammar at A1 and one listening attempt
    // are A1 overall (lower median of below-A1, A1, A1), whatever the last batch touched.
    const mixed = await createTenant();
    const v = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 3,
      skills: ["reading", "grammar", "listening"],
    });
    await record(mixed.learner.token, [
      ...Array.from({ length: 10 }, () => attempt(v.items[0]!)),
      ...Array.from({ length: 10 }, () => attempt(v.items[1]!)),
    ]);
    await record(mixed.learner.token, [attempt(v.items[2]!)]);
    expect((await callJson("/api/cefr/report", { token: mixed.learner.token })).body.overall_level).toBe(
      "A1",
    );
    const atA1 = await callJson("/api/learning-insights", { token: mixed.learner.token });
    expect(atA1.body.recommendations.map((r: any) => [r.course_id, r.reason_code, r.reason])).toEqual(
      a1.map((c) => [c.id, "matches_level", "matches your level A1"]),
    );
  });

  it("reads as declining when accuracy falls, and steady with one week of activity", async () => {
    const { learner, instructor } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2 });
    const twoWeeksAgo = `${addDays(today(), -14)}T08:00:00Z`;
    await record(learner.token, [
      attempt(course.items[0]!, { at: twoWeeksAgo }),
      attempt(course.items[1]!, { at: twoWeeksAgo }),
    ]);
    const one = await callJson(`/api/learning-insights?user_id=${learner.id}`, { token: instructor.token });
    expect(one.body.accuracy_trend).toMatchObject({ slope: null, label: "steady" });
    await record(learner.token, [
      attempt(course.items[0]!, { score: 0.1, correct: false }),
      attempt(course.items[1]!, { score: 0.9, correct: true }),
    ]);
    const two = await callJson(`/api/learning-insights?user_id=${learner.id}`, { token: instructor.token });
    // 1.0 two weeks ago, 0.5 this week: −0.25 a week.
    expect(two.body.accuracy_trend).toMatchObject({ slope: -0.25, label: "declining" });
  });
});
