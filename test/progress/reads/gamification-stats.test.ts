import { describe, expect, it } from "vitest";
import { addDays, weekOf } from "../../../src/domains/progress/rules";
import { callJson } from "../../helpers/api";
import { createPublishedCourse } from "../../helpers/progress-fixture";
import { createTenant } from "../../helpers/tenants";
import { attempt, learnerIn, record, today } from "./support";

const iso = (at: string | number) => new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("GET /api/gamification/stats", () => {
  it("reports XP, this week's XP, streaks and achievements with their progress", async () => {
    const { learner, instructor } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2, xp: 10 });
    const day = today();
    const threeDaysAgo = `${addDays(day, -3)}T12:00:00Z`;
    const yesterday = `${addDays(day, -1)}T12:00:00Z`;
    const now = Date.now();
    await record(learner.token, [attempt(course.items[0]!, { at: threeDaysAgo })]); // +10, first_steps
    await record(learner.token, [attempt(course.items[0]!, { at: yesterday })]); // practice: +1
    await record(learner.token, [attempt(course.items[1]!, { at: now })]); // +10, lesson and course complete, perfect

    const xpOn: [string, number][] = [
      [addDays(day, -3), 10],
      [addDays(day, -1), 1],
      [day, 10],
    ];
    const thisWeek = xpOn.filter(([d]) => weekOf(d) === weekOf(day)).reduce((s, [, xp]) => s + xp, 0);

    const { res, body } = await callJson("/api/gamification/stats", { token: learner.token });
    expect(res.status).toBe(200);
    expect(body).toEqual({
      user_id: learner.id,
      xp_total: 21,
      xp_this_week: thisWeek,
      week: weekOf(day),
      current_streak: 2,
      longest_streak: 2,
      last_active_day: day,
      achievements: {
        unlocked: [
          {
            code: "first_steps",
            name: "First steps",
            description: "Pass your first training item.",
            unlocked_at: threeDaysAgo,
          },
          {
            code: "course_complete",
            name: "Graduate",
            description: "Complete a course.",
            unlocked_at: iso(now),
          },
          {
            code: "first_lesson",
            name: "Lesson learned",
            description: "Complete a lesson.",
            unlocked_at: iso(now),
          },
          {
            code: "perfect_lesson",
            name: "Flawless",
            description: "Complete a lesson with a perfect score.",
            unlocked_at: iso(now),
          },
        ],
        locked: [
          {
            code: "ten_lessons",
            name: "Ten down",
            description: "Complete 10 lessons.",
            progress: { current: 1, target: 10 },
          },
          {
            code: "xp_1000",
            name: "Thousand club",
            description: "Earn 1,000 XP.",
            progress: { current: 21, target: 1000 },
          },
          {
            code: "xp_10000",
            name: "Ten thousand",
            description: "Earn 10,000 XP.",
            progress: { current: 21, target: 10000 },
          },
          {
            code: "streak_7",
            name: "Week warrior",
            description: "Study 7 days in a row.",
            progress: { current: 2, target: 7 },
          },
          {
            code: "streak_30",
            name: "Habit formed",
            description: "Study 30 days in a row.",
            progress: { current: 2, target: 30 },
          },
        ],
      },
    });

    const forMember = await callJson(`/api/gamification/stats?user_id=${learner.id}`, {
      token: instructor.token,
    });
    expect(forMember.res.status).toBe(200);
    expect(forMember.body).toEqual(body);
  });

  it("starts from zero, with every achievement locked", async () => {
    const { learner } = await createTenant();
    const { body } = await callJson("/api/gamification/stats", { token: learner.token });
    expect(body).toMatchObject({
      xp_total: 0,
      xp_this_week: 0,
      week: weekOf(today()),
      current_streak: 0,
      longest_streak: 0,
      last_active_day: null,
    });
    expect(body.achievements.unlocked).toEqual([]);
    expect(body.achievements.locked.map((a: any) => [a.code, a.progress.current])).toEqual([
      ["first_steps", 0],
      ["first_lesson", 0],
      ["ten_lessons", 0],
      ["perfect_lesson", 0],
      ["course_complete", 0],
      ["xp_1000", 0],
      ["xp_10000", 0],
      ["streak_7", 0],
      ["streak_30", 0],
    ]);
  });

  it("counts streak days in the learner's time zone and lets a streak lapse after a missed day", async () => {
    const { institution } = await createTenant();
    const kiritimati = await learnerIn(institution.id, { timeZone: "Pacific/Kiritimati" }); // UTC+14
    const utc = await learnerIn(institution.id, { timeZone: "UTC" });
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2 });
    const d = addDays(today(), -4);
    // 09:00Z is 23:00 the same day in Kiritimati, 11:00Z is 01:00 the next day: two days there, one in UTC.
    const attempts = () => [
      attempt(course.items[0]!, { at: `${d}T09:00:00Z` }),
      attempt(course.items[1]!, { at: `${d}T11:00:00Z` }),
    ];
    await record(kiritimati.token, attempts());
    await record(utc.token, attempts());

    const there = await callJson("/api/gamification/stats", { token: kiritimati.token });
    expect(there.body).toMatchObject({
      current_streak: 0,
      longest_streak: 2,
      last_active_day: addDays(d, 1),
    });
    const here = await callJson("/api/gamification/stats", { token: utc.token });
    expect(here.body).toMatchObject({ current_streak: 0, longest_streak: 1, last_active_day: d });
  });

  it("keeps a streak that ended yesterday alive (the learner has not studied yet today)", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3 });
    const day = today();
    await record(learner.token, [
      attempt(course.items[0]!, { at: `${addDays(day, -3)}T12:00:00Z` }),
      attempt(course.items[1]!, { at: `${addDays(day, -2)}T12:00:00Z` }),
      attempt(course.items[2]!, { at: `${addDays(day, -1)}T12:00:00Z` }),
    ]);
    const { body } = await callJson("/api/gamification/stats", { token: learner.token });
    expect(body).toMatchObject({ current_streak: 3, longest_streak: 3, last_active_day: addDays(day, -1) });
  });
});
