import { describe, expect, it } from "vitest";
import { addDays } from "../../../src/domains/progress/rules";
import { callJson } from "../../helpers/api";
import { createPublishedCourse } from "../../helpers/progress-fixture";
import { createTenant, mintToken } from "../../helpers/tenants";
import { attempt, record, today } from "./support";

async function stats(token: string) {
  const { res, body } = await callJson("/api/stats", { token });
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

describe("GET /api/stats", () => {
  it("counts published content, active learners by window and all-time activity", async () => {
    const { admin, learner } = await createTenant();
    const before = await stats(admin.token);
    expect(before.active_learners.as_of).toBe(today());
    expect(Date.parse(before.generated_at)).toBeGreaterThan(Date.now() - 60_000);

    const big = await createPublishedCourse({ lessons: 2, blocksPerLesson: 2, itemsPerBlock: 2 }); // 8 items
    const small = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 });
    await createPublishedCourse({ lessons: 3, published: false }); // drafts do not count

    // The learner: lesson 1 of `big` (4 items) after one miss, and all of `small`.
    await record(learner.token, [
      attempt(big.items[0]!, { score: 0, correct: false }),
      ...big.lessons[0]!.items.map((i) => attempt(i.id)),
    ]);
    await record(learner.token, [attempt(small.items[0]!)]);
    // Another learner, last active 10 days ago.
    const { learner: earlier } = await createTenant();
    await record(earlier.token, [attempt(big.items[0]!, { at: `${addDays(today(), -10)}T12:00:00Z` })]);

    const after = await stats(admin.token);
    const delta = (path: (s: any) => number) => path(after) - path(before);
    expect({
      courses: delta((s) => s.content.courses),
      lessons: delta((s) => s.content.lessons),
      training_items: delta((s) => s.content.training_items),
      today: delta((s) => s.active_learners.today),
      last_7_days: delta((s) => s.active_learners.last_7_days),
      last_30_days: delta((s) => s.active_learners.last_30_days),
      attempts: delta((s) => s.activity.attempts),
      items_completed: delta((s) => s.activity.items_completed),
      lessons_completed: delta((s) => s.activity.lessons_completed),
      courses_completed: delta((s) => s.activity.courses_completed),
    }).toEqual({
      courses: 2,
      lessons: 3,
      training_items: 9,
      today: 1,
      last_7_days: 1,
      last_30_days: 2,
      attempts: 7,
      items_completed: 6,
      lessons_completed: 2,
      courses_completed: 1,
    });
  });

  it("needs stats:read, which learners and instructors do not have", async () => {
    const { admin, learner, instructor } = await createTenant();
    for (const token of [
      learner.token,
      instructor.token,
      (await mintToken(admin, ["progress:read"])).token,
    ]) {
      const { res, body } = await callJson("/api/stats", { token });
      expect(res.status).toBe(403);
      expect(body.code).toBe("missing_ability");
      expect(body.detail).toContain("`stats:read`");
    }
    const scoped = await mintToken(admin, ["stats:read"]);
    expect((await callJson("/api/stats", { token: scoped.token })).res.status).toBe(200);
  });
});
