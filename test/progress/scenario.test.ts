import { expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant } from "../helpers/tenants";
import { outboxOf, recentToday } from "./reads/support";

/**
 * The scenario, end to end over HTTP: a learner completes every item of a lesson, and the
 * lesson, XP, streak, CEFR evidence, achievements, history and leaderboard all move, with exactly the
 * expected domain events in the outbox.
 */
it("a learner completing a lesson moves every report and emits exactly the expected events", async () => {
  const { learner, admin } = await createTenant();
  // Two lessons of 10 reading items at A1: one lesson is exactly the evidence A1 needs.
  const course = await createPublishedCourse({
    lessons: 2,
    blocksPerLesson: 2,
    itemsPerBlock: 5,
    skills: ["reading"],
    levels: ["A1"],
    xp: 10,
  });
  const [lesson, nextLesson] = course.lessons;
  const read = async (path: string) => {
    const { res, body } = await callJson(path, { token: learner.token });
    expect(res.status, path).toBe(200);
    return body;
  };

  // Before: nothing.
  const before = {
    progress: await read(`/api/courses/${course.courseId}/lesson-progress`),
    stats: await read("/api/gamification/stats"),
    cefr: await read("/api/cefr/report"),
    board: await read("/api/gamification/leaderboard"),
  };
  expect(before.progress.data.map((l: any) => l.status)).toEqual(["not_started", "not_started"]);
  expect(before.stats).toMatchObject({ xp_total: 0, xp_this_week: 0, current_streak: 0 });
  expect(before.stats.achievements.unlocked).toEqual([]);
  expect(before.cefr.overall_level).toBeNull();
  expect(before.board.me).toMatchObject({ xp: 0 });

  // Ten minutes ago, but never before today's midnight (UTC): "today" and "this week" must hold the
  // session whenever the test runs. Right after midnight the last attempts are a few minutes ahead,
  // within the 5 minutes of clock skew the API allows.
  const occurredAt = new Date(recentToday(10 * 60_000));
  const attempts = lesson!.items.map((item, i) => ({
    id: crypto.randomUUID(),
    training_item_id: item.id,
    score: 1,
    correct: true,
    duration_seconds: 30,
    occurred_at: new Date(occurredAt.getTime() + i * 31_000).toISOString(),
  }));
  const recorded = await callJson("/api/progress/attempts", { token: learner.token, body: { attempts } });
  expect(recorded.res.status).toBe(200);
  expect(recorded.body.summary).toMatchObject({
    recorded: 10,
    xp_gained: 100,
    lessons_completed: [lesson!.id],
    current_streak: 1,
  });

  // The lesson.
  const progress = await read(`/api/courses/${course.courseId}/lesson-progress`);
  expect(progress.data[0]).toMatchObject({
    lesson_id: lesson!.id,
    status: "completed",
    items_done: 10,
    items_total: 10,
    percent: 100,
    score: 1,
  });
  expect(progress.data[1]).toMatchObject({ lesson_id: nextLesson!.id, status: "not_started", items_done: 0 });

  // XP, streak, achievements.
  const stats = await read("/api/gamification/stats");
  expect(stats).toMatchObject({ xp_total: 100, xp_this_week: 100, current_streak: 1, longest_streak: 1 });
  expect(stats.achievements.unlocked.map((a: any) => a.code)).toEqual([
    "first_steps",
    "first_lesson",
    "perfect_lesson",
  ]);
  expect(stats.achievements.locked.find((a: any) => a.code === "ten_lessons").progress).toEqual({
    current: 1,
    target: 10,
  });

  // CEFR evidence: ten reading attempts at A1, all right.
  const cefr = await read("/api/cefr/report");
  const reading = cefr.skills.find((s: any) => s.skill === "reading");
  expect(reading).toMatchObject({ level: "A1", next_level: "A2" });
  expect(reading.evidence).toEqual([{ level: "A1", attempts: 10, correct: 10, accuracy: 1 }]);
  expect(cefr.overall_level).toBe("A1");

  // History: today holds the session.
  const history = await read("/api/progress-history");
  const day = history.series.at(-1);
  expect(day).toMatchObject({ attempts: 10, items_completed: 10, correct: 10, xp: 100, minutes: 5 });
  expect(history.totals).toMatchObject({ attempts: 10, xp: 100, active_days: 1 });

  // Leaderboard: first in the institution this week, as seen by the learner and by the admin.
  const board = await read("/api/gamification/leaderboard");
  expect(board.me).toMatchObject({ rank: 1, xp: 100, is_me: true });
  expect(board.entries[0]).toMatchObject({ user_id: learner.id, xp: 100 });
  const adminView = await callJson("/api/gamification/leaderboard", { token: admin.token });
  expect(adminView.body.entries[0]).toMatchObject({ user_id: learner.id, rank: 1 });

  // Exactly these events, in this order, each once.
  const results = await outboxOf(learner.id);
  expect(results.map((r) => [r.type, r.payload.code ?? r.payload.skill ?? r.payload.lesson_id])).toEqual([
    ["achievement.unlocked", "first_steps"],
    ["lesson.completed", lesson!.id],
    ["achievement.unlocked", "first_lesson"],
    ["achievement.unlocked", "perfect_lesson"],
    ["cefr.level_changed", "reading"],
    ["cefr.level_changed", "overall"],
  ]);

  // Resending the same batch moves nothing.
  const again = await callJson("/api/progress/attempts", { token: learner.token, body: { attempts } });
  expect(again.body.summary).toMatchObject({ recorded: 0, duplicates: 10, xp_total: 100, events: [] });
  expect((await read("/api/gamification/stats")).xp_total).toBe(100);
  expect(await outboxOf(learner.id)).toHaveLength(6);
});
