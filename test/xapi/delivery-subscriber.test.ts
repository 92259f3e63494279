import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { outboxEvents } from "../../src/db/schema";
import { forwardEvents } from "../../src/domains/xapi/delivery/subscriber";
import { database } from "../../src/platform/db";
import { newId } from "../../src/platform/ids";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant } from "../helpers/tenants";
import { batchesOf, createEndpoint, heldContext, statementsOf } from "./support";

/**
 * The subscriber's reading of each event type, on outbox rows written straight to D1 (so no events
 * queue races the test) and handed to it directly.
 */

const AT = "2026-11-21T09:30:00Z";

async function events(institutionId: string, userId: string, list: [string, Record<string, unknown>][]) {
  const rows = list.map(([type, payload]) => ({
    id: newId("evt"),
    type,
    institutionId,
    userId,
    payload: { user_id: userId, ...payload },
    createdAt: AT,
  }));
  await database(env.DB).insert(outboxEvents).values(rows);
  return rows.map((r) => r.id);
}

it("makes completed, mastered (a rise only) and earned facts, as each endpoint's activities want, once", async () => {
  const tenant = await createTenant();
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2 });
  const lesson = course.lessons[0]!.id;
  const all = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/all");
  const onlyEarned = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/earned", {
    activities: ["earned"],
  });
  const off = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/off", { enabled: false });
  const user = tenant.learner.id;
  const ids = await events(tenant.institution.id, user, [
    [
      "lesson.completed",
      {
        lesson_id: lesson,
        course_id: course.courseId,
        score: 0.9,
        items: 2,
        completed_at: "2026-11-21T09:00:00Z",
      },
    ],
    ["course.completed", { course_id: course.courseId, xp: 20, completed_at: "2026-11-21T09:00:01Z" }],
    ["cefr.level_changed", { skill: "reading", from: null, to: "A1" }],
    ["cefr.level_changed", { skill: "overall", from: "A2", to: "B1" }],
    ["cefr.level_changed", { skill: "grammar", from: "B1", to: "A2" }],
    [
      "achievement.unlocked",
      { code: "first_lesson", name: "First lesson", unlocked_at: "2026-11-21T09:00:02Z" },
    ],
    ["streak.milestone", { days: 3, day: "2026-11-21" }],
    ["member.created", { email: "x@example.test" }],
  ]);
  const { ctx, queue } = heldContext();
  await forwardEvents(ctx, ids);

  const verbs = (await statementsOf(all)).map((s) => [s.verb, s.occurredAt]);
  expect(verbs.sort()).toEqual(
    [
      ["completed", "2026-11-21T09:00:00Z"],
      ["completed", "2026-11-21T09:00:01Z"],
      ["mastered", AT],
      ["mastered", AT],
      ["earned", "2026-11-21T09:00:02Z"],
    ].sort(),
  );
  expect((await statementsOf(onlyEarned)).map((s) => s.verb)).toEqual(["earned"]);
  expect(await statementsOf(off)).toEqual([]);
  expect(await batchesOf(all)).toHaveLength(1);
  expect(queue.messages).toHaveLength(2);

  // The same events again (a redelivery): no statement, no batch; only the untried batches queued again.
  await forwardEvents(ctx, ids);
  expect(await statementsOf(all)).toHaveLength(5);
  expect(await batchesOf(all)).toHaveLength(1);
  expect(new Set(queue.messages.map((m) => JSON.stringify(m))).size).toBe(2);
});

it("ignores the events of an institution that forwards nothing, and an empty hand-over", async () => {
  const tenant = await createTenant();
  const ids = await events(tenant.institution.id, tenant.learner.id, [
    ["achievement.unlocked", { code: "first_lesson", name: "First lesson", unlocked_at: AT }],
  ]);
  const { ctx, queue } = heldContext();
  await forwardEvents(ctx, ids);
  await forwardEvents(ctx, []);
  expect(queue.messages).toEqual([]);
});
