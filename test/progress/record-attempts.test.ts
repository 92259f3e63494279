import { env } from "cloudflare:test";
import { and, count, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { userNumberOf } from "../../src/db/numbers";
import { attempts, dailyActivity, itemProgress, learnerStats, outboxEvents } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant, mintToken } from "../helpers/tenants";
import { outboxOf, updateUser } from "./reads/support";

const db = () => database(env.DB);

async function attemptCount(userId: string): Promise<number> {
  const row = await db().select({ n: count() }).from(attempts).where(eq(attempts.userId, userId)).get();
  return row?.n ?? 0;
}

function attempt(itemId: string, overrides: Record<string, unknown> = {}) {
  return {
    id: crypto.randomUUID(),
    training_item_id: itemId,
    score: 1,
    correct: true,
    duration_seconds: 30,
    occurred_at: new Date(Date.now() - 60_000).toISOString(),
    ...overrides,
  };
}

function record(token: string, body: unknown) {
  return callJson("/api/progress/attempts", { token, body });
}

async function outbox(userId: string) {
  return (await outboxOf(userId)) as { id: string; type: string; payload: any }[];
}

describe("POST /api/progress/attempts", () => {
  it("orders a batch by the times sent, even those a little ahead of the server's clock", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2, xp: 10 });
    const item = course.items[0]!;
    const now = Date.now();
    // Both pass the same item within the allowed skew, sent out of order: the earlier one is the first pass.
    const later = attempt(item, { occurred_at: new Date(now + 120_000).toISOString() });
    const earlier = attempt(item, { occurred_at: new Date(now + 60_000).toISOString() });
    const { res, body } = await record(learner.token, { attempts: [later, earlier] });
    expect(res.status).toBe(200);
    const byId = new Map(body.data.map((o: any) => [o.id, o]));
    expect(byId.get(earlier.id)).toMatchObject({ xp_gained: 10, item_completed: true });
    // Practice XP for passing it again.
    expect(byId.get(later.id)).toMatchObject({ xp_gained: 1, item_completed: false });
  });

  it("records a learner completing a lesson, with XP, completion, achievements and exactly the expected events", async () => {
    const { learner, institution } = await createTenant();
    const course = await createPublishedCourse({ lessons: 2, blocksPerLesson: 2, itemsPerBlock: 3, xp: 10 });
    const lesson = course.lessons[0]!;

    const first = await record(learner.token, attempt(lesson.items[0]!.id));
    expect(first.res.status).toBe(200);
    expect(first.body.data).toEqual([
      {
        id: expect.any(String),
        status: "recorded",
        xp_gained: 10,
        item_completed: true,
        lesson: { id: lesson.id, status: "in_progress", items_done: 1, items_total: 6, percent: 17 },
        course_completed: false,
        achievements_unlocked: ["first_steps"],
      },
    ]);
    expect(first.body.summary).toMatchObject({
      recorded: 1,
      duplicates: 0,
      xp_gained: 10,
      xp_total: 10,
      current_streak: 1,
    });

    // A miss earns nothing and completes nothing; then the rest of the lesson in one batch.
    const miss = await record(learner.token, attempt(lesson.items[1]!.id, { score: 0.2, correct: false }));
    expect(miss.body.data[0]).toMatchObject({
      xp_gained: 0,
      item_completed: false,
      lesson: { items_done: 1 },
    });
    const rest = await record(learner.token, { attempts: lesson.items.slice(1).map((i) => attempt(i.id)) });
    expect(rest.res.status).toBe(200);
    expect(rest.body.data.map((o: any) => o.xp_gained)).toEqual([10, 10, 10, 10, 10]);
    const last = rest.body.data.at(-1);
    expect(last.lesson).toEqual({
      id: lesson.id,
      status: "completed",
      items_done: 6,
      items_total: 6,
      percent: 100,
    });
    expect(last.achievements_unlocked).toEqual(["first_lesson", "perfect_lesson"]);
    expect(rest.body.summary).toMatchObject({
      recorded: 5,
      xp_gained: 50,
      xp_total: 60,
      lessons_completed: [lesson.id],
      courses_completed: [],
    });

    const events = await outbox(learner.id);
    expect(events.map((e) => e.type)).toEqual([
      "achievement.unlocked",
      "lesson.completed",
      "achievement.unlocked",
      "achievement.unlocked",
    ]);
    const completed = events.find((e) => e.type === "lesson.completed")!;
    expect(completed.payload).toMatchObject({
      user_id: learner.id,
      lesson_id: lesson.id,
      course_id: course.courseId,
      score: 1,
      items: 6,
    });
    expect(completed.id).toMatch(/^evt_/);
    const row = await db()
      .select({ institutionId: outboxEvents.institutionId })
      .from(outboxEvents)
      .where(eq(outboxEvents.id, completed.id))
      .get();
    expect(row!.institutionId).toBe(institution.id);
    expect(rest.body.summary.events.map((e: any) => e.id)).toEqual(events.slice(1).map((e) => e.id));
  });

  it("completes the course when its last lesson completes", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 2, blocksPerLesson: 1, itemsPerBlock: 2 });
    const result = await record(learner.token, { attempts: course.items.map((id) => attempt(id)) });
    expect(result.body.summary.lessons_completed).toEqual(course.lessons.map((l) => l.id));
    expect(result.body.summary.courses_completed).toEqual([course.courseId]);
    expect(result.body.data.at(-1).course_completed).toBe(true);
    const types = (await outbox(learner.id)).map((e) => e.type);
    expect(types.filter((t) => t === "course.completed")).toHaveLength(1);
    expect(types.filter((t) => t === "lesson.completed")).toHaveLength(2);
  });

  it("counts a resent attempt once, whether resent alone, in a batch, or concurrently", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse();
    const once = attempt(course.items[0]!);
    expect((await record(learner.token, once)).body.summary.xp_total).toBe(10);
    const again = await record(learner.token, { attempts: [once, attempt(course.items[1]!)] });
    expect(again.body.data.map((o: any) => o.status)).toEqual(["duplicate", "recorded"]);
    expect(again.body.summary).toMatchObject({ recorded: 1, duplicates: 1, xp_total: 20 });

    const twin = attempt(course.items[2]!);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => record(learner.token, { attempts: [twin] })),
    );
    expect(results.map((r) => r.res.status)).toEqual([200, 200, 200, 200]);
    expect(results.filter((r) => r.body.data[0].status === "recorded")).toHaveLength(1);
    const stats = await db()
      .select({
        xpTotal: learnerStats.xpTotal,
        attempts: learnerStats.attempts,
        itemsCompleted: learnerStats.itemsCompleted,
      })
      .from(learnerStats)
      .where(eq(learnerStats.userId, learner.id))
      .get();
    expect(stats).toEqual({ xpTotal: 30, attempts: 3, itemsCompleted: 3 });
    expect(await attemptCount(learner.id)).toBe(3);
    expect((await outbox(learner.id)).filter((e) => e.payload.code === "first_steps")).toHaveLength(1);
  });

  it("reports a resent id with other values as a duplicate, and the first recording stands", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3, xp: 10 });
    const first = attempt(course.items[0]!, { score: 0.2, correct: false, duration_seconds: 40 });
    expect((await record(learner.token, first)).body.data[0]).toMatchObject({
      status: "recorded",
      xp_gained: 0,
      item_completed: false,
    });
    const changed = {
      ...first,
      training_item_id: course.items[1]!,
      score: 1,
      correct: true,
      duration_seconds: 5,
      // Another time too: the id alone makes an attempt (the table is keyed by it).
      occurred_at: new Date(Date.now() - 3_600_000).toISOString(),
    };
    const resent = await record(learner.token, changed);
    expect(resent.res.status).toBe(200);
    expect(resent.body.data[0]).toEqual({
      id: first.id,
      status: "duplicate",
      xp_gained: 0,
      item_completed: false,
      lesson: null,
      course_completed: false,
      achievements_unlocked: [],
    });
    expect(resent.body.summary).toMatchObject({ recorded: 0, duplicates: 1, xp_total: 0, events: [] });
    const row = await db()
      .select({
        trainingItemId: attempts.trainingItemId,
        score: attempts.score,
        correct: attempts.correct,
        durationSeconds: attempts.durationSeconds,
      })
      .from(attempts)
      .where(eq(attempts.id, first.id))
      .get();
    expect(row).toEqual({ trainingItemId: course.items[0], score: 0.2, correct: false, durationSeconds: 40 });
    const progress = await callJson(`/api/courses/${course.courseId}/lesson-progress`, {
      token: learner.token,
    });
    expect(progress.body.data[0]).toMatchObject({ items_done: 0, status: "in_progress" });
  });

  it("honours Idempotency-Key: a retry replays the first response byte for byte, another body is 422, and nothing is recorded twice", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3, xp: 10 });
    const headers = { "Idempotency-Key": `attempts-${crypto.randomUUID()}` };
    const body = { attempts: course.items.map((id) => attempt(id)) };
    const send = (payload: unknown) =>
      call("/api/progress/attempts", { token: learner.token, body: payload, headers });

    const first = await send(body);
    const firstText = await first.text();
    expect(first.status).toBe(200);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    expect(JSON.parse(firstText).summary).toMatchObject({
      recorded: 3,
      xp_total: 30,
      lessons_completed: [course.lessons[0]!.id],
    });
    const eventsAfterFirst = (await outbox(learner.id)).length;

    const retry = await send(body);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.headers.get("Content-Type")).toBe(first.headers.get("Content-Type"));
    expect(await retry.text()).toBe(firstText);

    // The same attempts under the same key in another batch shape: another body.
    const reused = await send({ attempts: [...body.attempts].reverse() });
    expect(reused.status).toBe(422);
    expect(reused.headers.get("Content-Type")).toContain("application/problem+json");
    expect(((await reused.json()) as { code: string }).code).toBe("idempotency_key_reused");
    const other = await send(attempt(course.items[0]!));
    expect(other.status).toBe(422);

    expect(await attemptCount(learner.id)).toBe(3);
    const stats = await db()
      .select({ xpTotal: learnerStats.xpTotal, attempts: learnerStats.attempts })
      .from(learnerStats)
      .where(eq(learnerStats.userId, learner.id))
      .get();
    expect(stats).toEqual({ xpTotal: 30, attempts: 3 });
    expect(await outbox(learner.id)).toHaveLength(eventsAfterFirst);

    // Without the key, the same retry is answered afresh: every attempt a duplicate.
    const unkeyed = await record(learner.token, body);
    expect(unkeyed.body.summary).toMatchObject({ recorded: 0, duplicates: 3 });
  });

  it("lets one of several concurrent requests with one Idempotency-Key record; the others replay it or are told it is in flight", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse();
    const headers = { "Idempotency-Key": `race-${crypto.randomUUID()}` };
    const body = { attempts: [attempt(course.items[0]!), attempt(course.items[1]!)] };
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        callJson("/api/progress/attempts", { token: learner.token, body, headers }),
      ),
    );
    const statuses = results.map((r) => r.res.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    const answered = results.filter((r) => r.res.status === 200);
    expect(answered.filter((r) => r.res.headers.get("Idempotent-Replayed") === null)).toHaveLength(1);
    for (const r of answered) expect(r.body).toEqual(answered[0]!.body);
    expect(answered[0]!.body.summary).toMatchObject({ recorded: 2, duplicates: 0 });
    for (const r of results.filter((r) => r.res.status === 409))
      expect(r.body.code).toBe("idempotency_in_flight");
    expect(await attemptCount(learner.id)).toBe(2);
  });

  it("rejects a malformed Idempotency-Key with 422 and records nothing", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse();
    const { res, body } = await callJson("/api/progress/attempts", {
      token: learner.token,
      body: attempt(course.items[0]!),
      headers: { "Idempotency-Key": "two words" },
    });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([{ path: "Idempotency-Key", message: expect.any(String) }]);
    expect(await attemptCount(learner.id)).toBe(0);
  });

  it("is documented with its Idempotency-Key, its 409 and the first-recording-wins rule", async () => {
    const { body: doc } = await callJson("/api/openapi.json");
    const operation = doc.paths["/api/progress/attempts"].post;
    expect(operation.parameters.map((p: any) => p.name)).toContain("Idempotency-Key");
    expect(Object.keys(operation.responses["409"].content)).toEqual(["application/problem+json"]);
    expect(operation.responses["409"].description).toContain("another learner");
    expect(operation.description).toContain("the first recording wins");
  });

  it("refuses an attempt id already used by another learner", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const course = await createPublishedCourse();
    const shared = attempt(course.items[0]!);
    expect((await record(a.learner.token, shared)).res.status).toBe(200);
    const clash = await record(b.learner.token, shared);
    expect(clash.res.status).toBe(409);
    expect(clash.body.code).toBe("conflict");
  });

  it("keeps per-item XP at practice level after the first pass and updates the lesson score", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2 });
    await record(learner.token, attempt(course.items[0]!, { score: 0.7, correct: false }));
    const repeat = await record(learner.token, attempt(course.items[0]!, { score: 1 }));
    expect(repeat.body.data[0]).toMatchObject({ xp_gained: 1, item_completed: false });
    // Stored by the learner's and the item's numbers (docs/design/capacity.md, "Integer keys").
    const row = await db()
      .select({ bestScore: itemProgress.bestScore })
      .from(itemProgress)
      .where(
        and(
          eq(itemProgress.userNumber, userNumberOf(learner.id)),
          eq(
            itemProgress.itemNumber,
            sql`(SELECT number FROM training_items WHERE id = ${course.items[0]!})`,
          ),
        ),
      )
      .get();
    expect(row).toEqual({ bestScore: 1 });
  });

  it.each([
    ["a score above 1", { score: 1.5 }, "attempts.0.score"],
    ["a negative duration", { duration_seconds: -1 }, "attempts.0.duration_seconds"],
    [
      "a future time",
      { occurred_at: new Date(Date.now() + 3_600_000).toISOString() },
      "attempts.0.occurred_at",
    ],
    ["a malformed time", { occurred_at: "yesterday" }, "attempts.0.occurred_at"],
    ["a non-UUID id", { id: "attempt-1" }, "attempts.0.id"],
    ["an unknown field", { bonus: 100 }, "attempts.0.bonus"],
  ])("rejects %s with 422 and records nothing", async (_label, overrides, path) => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse();
    const { res, body } = await record(learner.token, { attempts: [attempt(course.items[0]!, overrides)] });
    expect(res.status).toBe(422);
    expect(body.errors.map((e: any) => e.path)).toContain(path);
    expect(await attemptCount(learner.id)).toBe(0);
  });

  it("rejects unknown items and items of unpublished courses, reporting each, and records nothing of the batch", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse();
    const draft = await createPublishedCourse({ published: false });
    const { res, body } = await record(learner.token, {
      attempts: [attempt(course.items[0]!), attempt("itm_nope"), attempt(draft.items[0]!)],
    });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([
      { path: "attempts.1.training_item_id", message: "is not a training item of a published course" },
      { path: "attempts.2.training_item_id", message: "is not a training item of a published course" },
    ]);
    expect(await attemptCount(learner.id)).toBe(0);
  });

  it("rejects a batch over 100, an empty batch and a repeated id", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse();
    const big = await record(learner.token, {
      attempts: Array.from({ length: 101 }, () => attempt(course.items[0]!)),
    });
    expect(big.res.status).toBe(422);
    expect(big.body.errors[0].path).toBe("attempts");
    expect((await record(learner.token, { attempts: [] })).res.status).toBe(422);
    const repeated = attempt(course.items[0]!);
    const dup = await record(learner.token, { attempts: [repeated, repeated] });
    expect(dup.res.status).toBe(422);
    expect(dup.body.errors[0]).toEqual({ path: "attempts.1.id", message: "repeats attempts.0.id" });
  });

  it("accepts a full batch of 100", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 5, blocksPerLesson: 4, itemsPerBlock: 5 });
    const { res, body } = await record(learner.token, { attempts: course.items.map((id) => attempt(id)) });
    expect(res.status).toBe(200);
    expect(body.summary).toMatchObject({
      recorded: 100,
      xp_total: 1000,
      courses_completed: [course.courseId],
    });
    expect(body.summary.achievements_unlocked).toEqual(
      expect.arrayContaining(["first_steps", "first_lesson", "course_complete", "xp_1000"]),
    );
  });

  it("lets an institution admin record for a member, but not for another institution's learner", async () => {
    const acme = await createTenant();
    const globex = await createTenant();
    const course = await createPublishedCourse();
    const forMember = await record(acme.admin.token, {
      user_id: acme.learner.id,
      attempts: [attempt(course.items[0]!)],
    });
    expect(forMember.res.status).toBe(200);
    const stats = await db()
      .select({ xpTotal: learnerStats.xpTotal })
      .from(learnerStats)
      .where(eq(learnerStats.userId, acme.learner.id))
      .get();
    expect(stats!.xpTotal).toBe(10);
    const forStranger = await record(acme.admin.token, {
      user_id: globex.learner.id,
      attempts: [attempt(course.items[0]!)],
    });
    expect(forStranger.res.status).toBe(404);
    const asLearner = await record(acme.learner.token, {
      user_id: acme.admin.id,
      attempts: [attempt(course.items[0]!)],
    });
    expect(asLearner.res.status).toBe(403);
  });

  it("requires progress:write", async () => {
    const { learner, instructor } = await createTenant();
    const course = await createPublishedCourse();
    const { token } = await mintToken(learner, ["progress:read"]);
    const res = await record(token, attempt(course.items[0]!));
    expect(res.res.status).toBe(403);
    expect(res.body.detail).toContain("`progress:write`");
    expect((await record(instructor.token, attempt(course.items[0]!))).res.status).toBe(403);
  });

  it("reports a CEFR level change once, and leaves the levels of skills a later batch does not touch alone", async () => {
    const { learner } = await createTenant();
    const reading = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 2,
      itemsPerBlock: 5,
      skills: ["reading"],
      levels: ["A1"],
    });
    const listening = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 1,
      skills: ["listening"],
      levels: ["A1"],
    });
    await record(learner.token, { attempts: reading.items.map((id) => attempt(id)) });
    const afterReading = (await outbox(learner.id))
      .filter((e) => e.type === "cefr.level_changed")
      .map((e) => e.payload);
    expect(afterReading).toEqual(
      expect.arrayContaining([
        { user_id: learner.id, skill: "reading", from: null, to: "A1" },
        { user_id: learner.id, skill: "overall", from: null, to: "A1" },
      ]),
    );
    expect(afterReading).toHaveLength(2);
    await record(learner.token, attempt(listening.items[0]!));
    const all = (await outbox(learner.id)).filter((e) => e.type === "cefr.level_changed");
    // Listening has evidence now but no level: the overall median drops to "none", reading stays A1.
    expect(all.slice(2).map((e) => e.payload)).toEqual([
      { user_id: learner.id, skill: "overall", from: "A1", to: null },
    ]);
    const stats = await db()
      .select({ cefrLevels: learnerStats.cefrLevels })
      .from(learnerStats)
      .where(eq(learnerStats.userId, learner.id))
      .get();
    expect(stats!.cefrLevels).toEqual({ reading: "A1" });
  });

  it("counts days in the learner's time zone and emits a streak milestone at 3 days", async () => {
    const { learner } = await createTenant();
    await updateUser(learner.id, { timeZone: "Pacific/Auckland" });
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3 });
    const day = 86_400_000;
    const now = Date.now();
    // Re-sign-in is not needed: the token's cached principal refreshes within a minute, so name the zone explicitly through D1 only.
    const attempts = [2, 1, 0].map((daysAgo, i) =>
      attempt(course.items[i]!, { occurred_at: new Date(now - daysAgo * day - 60_000).toISOString() }),
    );
    const result = await record(learner.token, { attempts });
    expect(result.res.status).toBe(200);
    const days = await db()
      .select({ day: dailyActivity.day })
      .from(dailyActivity)
      .where(eq(dailyActivity.userNumber, userNumberOf(learner.id)));
    expect(days).toHaveLength(3);
    expect(result.body.summary.current_streak).toBe(3);
    const milestones = (await outbox(learner.id)).filter((e) => e.type === "streak.milestone");
    expect(milestones.map((m) => m.payload.days)).toEqual([3]);
  });
});
