import { describe, expect, it } from "vitest";
import { callJson } from "../../helpers/api";
import { createPublishedCourse } from "../../helpers/progress-fixture";
import { createPlatformAdmin, createTenant } from "../../helpers/tenants";
import { attempt, expect422, record } from "./support";

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("GET /api/courses/{course}/lesson-progress", () => {
  it("lists every lesson in order with the learner's progress, score and status", async () => {
    const { learner, instructor } = await createTenant();
    const course = await createPublishedCourse({ lessons: 3, blocksPerLesson: 2, itemsPerBlock: 2, xp: 10 });
    const [one, two] = course.lessons;
    const base = Math.floor((Date.now() - 3 * 3_600_000) / 1000) * 1000;
    const at = (minute: number) => base + minute * 60_000;
    await record(learner.token, [
      // Lesson 1: a miss, then every item passed (0.6 without `correct` passes): completed.
      attempt(one!.items[0]!.id, { score: 0.2, correct: false, at: at(0) }),
      attempt(one!.items[0]!.id, { score: 1, at: at(1) }),
      attempt(one!.items[1]!.id, { score: 0.8, at: at(2) }),
      attempt(one!.items[2]!.id, { score: 0.6, correct: false, at: at(3) }),
      attempt(one!.items[3]!.id, { score: 0.9, at: at(4) }),
      // Lesson 2: one pass, one miss: in progress.
      attempt(two!.items[0]!.id, { score: 0.7, at: at(5) }),
      attempt(two!.items[1]!.id, { score: 0.3, correct: false, at: at(6) }),
    ]);

    const { res, body } = await callJson(`/api/courses/${course.courseId}/lesson-progress`, {
      token: learner.token,
    });
    expect(res.status).toBe(200);
    expect(body.data).toEqual([
      {
        lesson_id: one!.id,
        position: 1,
        title: "Lesson 1",
        items_done: 4,
        items_total: 4,
        percent: 100,
        status: "completed",
        started_at: iso(at(0)),
        completed_at: iso(at(4)),
        score: 0.825,
      },
      {
        lesson_id: two!.id,
        position: 2,
        title: "Lesson 2",
        items_done: 1,
        items_total: 4,
        percent: 25,
        status: "in_progress",
        started_at: iso(at(5)),
        completed_at: null,
        score: 0.7,
      },
      {
        lesson_id: course.lessons[2]!.id,
        position: 3,
        title: "Lesson 3",
        items_done: 0,
        items_total: 4,
        percent: 0,
        status: "not_started",
        started_at: null,
        completed_at: null,
        score: null,
      },
    ]);
    expect(body.meta).toEqual({ total: 3, per_page: 25, current_page: 1, last_page: 1 });

    // An instructor reads the same for a member of the institution.
    const asInstructor = await callJson(
      `/api/courses/${course.courseId}/lesson-progress?user_id=${learner.id}`,
      { token: instructor.token },
    );
    expect(asInstructor.res.status).toBe(200);
    expect(asInstructor.body.data).toEqual(body.data);
    // The instructor's own progress in it is empty.
    const own = await callJson(`/api/courses/${course.courseId}/lesson-progress`, {
      token: instructor.token,
    });
    expect(own.body.data.map((l: any) => l.status)).toEqual(["not_started", "not_started", "not_started"]);
  });

  it("pages with the shared envelope, keeping user_id in the links", async () => {
    const { learner, admin } = await createTenant();
    const course = await createPublishedCourse({ lessons: 5, blocksPerLesson: 1, itemsPerBlock: 1 });
    await record(learner.token, [attempt(course.items[2]!)]);
    const first = await callJson(
      `/api/courses/${course.courseId}/lesson-progress?per_page=2&user_id=${learner.id}`,
      { token: admin.token },
    );
    expect(first.res.status).toBe(200);
    expect(first.body.data.map((l: any) => l.position)).toEqual([1, 2]);
    expect(first.body.meta).toEqual({ total: 5, per_page: 2, current_page: 1, last_page: 3 });
    expect(first.body.links.prev).toBeNull();
    expect(Object.fromEntries(new URL(first.body.links.next).searchParams)).toEqual({
      per_page: "2",
      user_id: learner.id,
      page: "2",
    });

    const second = await callJson(first.body.links.next, { token: admin.token });
    expect(second.body.data.map((l: any) => [l.position, l.status])).toEqual([
      [3, "completed"],
      [4, "not_started"],
    ]);
    const last = await callJson(second.body.links.next, { token: admin.token });
    expect(last.body.data.map((l: any) => l.position)).toEqual([5]);
    expect(last.body.links.next).toBeNull();

    const past = await callJson(`/api/courses/${course.courseId}/lesson-progress?page=9`, {
      token: learner.token,
    });
    expect(past.res.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toMatchObject({ total: 5, current_page: 9, last_page: 1 });
  });

  it.each(["page=0", "page=abc", "per_page=0", "per_page=101", "user_id=a%20b"])(
    "rejects %s with 422 naming the field",
    async (query) => {
      const { learner } = await createTenant();
      const course = await createPublishedCourse({ lessons: 1 });
      const { res, body } = await callJson(`/api/courses/${course.courseId}/lesson-progress?${query}`, {
        token: learner.token,
      });
      expect422(res, body, query.split("=")[0]!);
    },
  );

  it("answers 404 for an unknown course, and for a draft except to platform staff", async () => {
    const { learner } = await createTenant();
    const unknown = await callJson("/api/courses/crs_nope/lesson-progress", { token: learner.token });
    expect(unknown.res.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");

    const draft = await createPublishedCourse({ lessons: 2, published: false });
    const hidden = await callJson(`/api/courses/${draft.courseId}/lesson-progress`, { token: learner.token });
    expect(hidden.res.status).toBe(404);
    const staff = await createPlatformAdmin();
    const shown = await callJson(`/api/courses/${draft.courseId}/lesson-progress`, { token: staff.token });
    expect(shown.res.status).toBe(200);
    expect(shown.body.data.map((l: any) => l.lesson_id)).toEqual(draft.lessons.map((l) => l.id));
  });
});
