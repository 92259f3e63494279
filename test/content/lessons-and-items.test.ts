import { beforeAll, describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { type CreatedCourse, createCourse } from "../helpers/catalog";
import { createPlatformAdmin, createTenant, type Tenant, type TestUser } from "../helpers/tenants";

let tenant: Tenant;
let staff: TestUser;
let live: CreatedCourse;
let draft: CreatedCourse;

const ids = (body: any) => body.data.map((x: any) => x.id);
const get = (path: string, token = tenant.learner.token) => callJson(path, { token });

beforeAll(async () => {
  [tenant, staff] = await Promise.all([createTenant(), createPlatformAdmin()]);
  live = await createCourse({ lessons: 3, blocksPerLesson: 3, itemsPerBlock: 4, from: "A1", to: "B1" });
  draft = await createCourse({ lessons: 2, blocksPerLesson: 2, itemsPerBlock: 3, published: false });
});

describe("GET /api/lessons", () => {
  it("lists a course's lessons in position order with full details", async () => {
    const { res, body } = await get(`/api/lessons?course=${live.id}`);
    expect(res.status).toBe(200);
    expect(ids(body)).toEqual(live.lessonIds);
    expect(body.meta).toEqual({ total: 3, per_page: 25, current_page: 1, last_page: 1 });
    const row = live.rows.lessons[0]!;
    expect(body.data[0]).toEqual({
      id: row.id,
      course_id: live.id,
      position: 1,
      title: row.title,
      cefr_level: "A1",
      objectives: JSON.parse(row.objectives as string),
      item_count: 12,
      estimated_minutes: row.estimated_minutes,
      created_at: "2026-03-01T10:00:00Z",
      updated_at: "2026-03-01T10:00:00Z",
    });
  });

  it("orders every visible lesson by course, then position, and pages", async () => {
    const all = await get("/api/lessons?per_page=100");
    const expected = live.lessonIds;
    expect(ids(all.body)).toEqual(expected); // the draft's lessons are not there
    const page = await get("/api/lessons?per_page=2&page=2");
    expect(ids(page.body)).toEqual(expected.slice(2, 4));
    expect(page.body.meta).toMatchObject({ total: 3, last_page: 2 });
    const staffView = await get("/api/lessons?per_page=100", staff.token);
    const byCourse = [
      [live.id, live.lessonIds],
      [draft.id, draft.lessonIds],
    ] as const;
    expect(ids(staffView.body)).toEqual(
      [...byCourse].sort((a, b) => (a[0] < b[0] ? -1 : 1)).flatMap(([, lessonIds]) => lessonIds),
    );
  });

  it("hides a draft course's lessons from everybody but staff", async () => {
    expect((await get(`/api/lessons?course=${draft.id}`)).body.data).toEqual([]);
    expect((await get(`/api/lessons?course=${draft.id}`, tenant.admin.token)).body.data).toEqual([]);
    expect(ids((await get(`/api/lessons?course=${draft.id}`, staff.token)).body)).toEqual(draft.lessonIds);
  });

  it("gives an empty list for an unknown course and 422 for a malformed id", async () => {
    expect((await get("/api/lessons?course=crs_unknown")).body).toMatchObject({
      data: [],
      meta: { total: 0 },
    });
    const bad = await get("/api/lessons?course=no%20spaces%20please&per_page=0");
    expect(bad.res.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["course", "per_page"]);
  });
});

describe("GET /api/trainings", () => {
  it("lists a lesson's training blocks in position order", async () => {
    const lessonId = live.lessonIds[1]!;
    const { res, body } = await get(`/api/trainings?lesson=${lessonId}`);
    expect(res.status).toBe(200);
    const expected = live.rows.trainings.filter((t) => t.lesson_id === lessonId);
    expect(ids(body)).toEqual(expected.map((t) => t.id));
    expect(body.data.map((t: any) => t.position)).toEqual([1, 2, 3]);
    expect(body.data[0]).toEqual({
      id: expected[0]!.id,
      lesson_id: lessonId,
      course_id: live.id,
      position: 1,
      kind: "warm_up",
      title: expected[0]!.title,
      item_count: 4,
      created_at: "2026-03-01T10:00:00Z",
      updated_at: "2026-03-01T10:00:00Z",
    });
  });

  it("orders all visible blocks by lesson, then position; drafts for staff only", async () => {
    const all = await get("/api/trainings?per_page=100");
    expect(ids(all.body)).toEqual(live.trainingIds); // lesson ids sort in position order here
    expect(all.body.meta.total).toBe(9);
    expect((await get(`/api/trainings?lesson=${draft.lessonIds[0]}`)).body.data).toEqual([]);
    expect((await get(`/api/trainings?lesson=${draft.lessonIds[0]}`, staff.token)).body.meta.total).toBe(2);
    expect((await get("/api/trainings?per_page=100", staff.token)).body.meta.total).toBe(13);
  });

  it("rejects a malformed lesson id with 422", async () => {
    const { res, body } = await get("/api/trainings?lesson=%27%3B--");
    expect(res.status).toBe(422);
    expect(body.errors.map((e: any) => e.path)).toEqual(["lesson"]);
  });
});

describe("GET /api/trainingItems", () => {
  it("lists a block's items in position order with their content", async () => {
    const trainingId = live.trainingIds[0]!;
    const { res, body } = await get(`/api/trainingItems?training=${trainingId}`);
    expect(res.status).toBe(200);
    const expected = live.rows.items.filter((i) => i.training_id === trainingId);
    expect(ids(body)).toEqual(expected.map((i) => i.id));
    const [first] = body.data;
    expect(first).toEqual({
      id: expected[0]!.id,
      training_id: trainingId,
      lesson_id: live.lessonIds[0],
      course_id: live.id,
      position: 1,
      type: expected[0]!.type,
      skill: expected[0]!.skill,
      cefr_level: "A1",
      xp: expected[0]!.xp,
      content: JSON.parse(expected[0]!.content),
      created_at: "2026-03-01T10:00:00Z",
      updated_at: "2026-03-01T10:00:00Z",
    });
    expect(typeof first.content.prompt).toBe("string");
    expect(first.xp).toBeGreaterThanOrEqual(5);
    expect(first.xp).toBeLessThanOrEqual(20);
  });

  it("orders all visible items by training block, then position", async () => {
    const { body } = await get("/api/trainingItems?per_page=100");
    expect(body.meta.total).toBe(36);
    const expected = [...live.rows.items].sort((a, b) =>
      a.training_id < b.training_id
        ? -1
        : a.training_id > b.training_id
          ? 1
          : (a.position as number) - (b.position as number),
    );
    expect(ids(body)).toEqual(expected.map((i) => i.id));
  });

  it.each([
    ["type", "speaking"],
    ["type", "multiple_choice"],
    ["skill", "vocabulary"],
    ["skill", "writing"],
    ["level", "A2"],
  ] as const)("filters by %s=%s", async (filter, value) => {
    const column = filter === "level" ? "cefr_level" : filter;
    const expected = live.rows.items.filter((i) => i[column] === value).map((i) => i.id);
    expect(expected.length).toBeGreaterThan(0);
    const { body } = await get(`/api/trainingItems?${filter}=${value}&per_page=100`);
    expect(ids(body).sort()).toEqual(expected.sort());
    expect(body.data.every((i: any) => i[column] === value)).toBe(true);
  });

  it("combines filters", async () => {
    const trainingId = live.trainingIds[4]!;
    const target = live.rows.items.find((i) => i.training_id === trainingId)!;
    const expected = live.rows.items.filter(
      (i) =>
        i.training_id === trainingId &&
        i.type === target.type &&
        i.skill === target.skill &&
        i.cefr_level === target.cefr_level,
    );
    const { body } = await get(
      `/api/trainingItems?training=${trainingId}&type=${target.type}&skill=${target.skill}&level=${target.cefr_level}`,
    );
    expect(ids(body)).toEqual(expected.map((i) => i.id));
    expect((await get(`/api/trainingItems?training=${trainingId}&level=C2`)).body.data).toEqual([]);
  });

  it("hides a draft course's items from everybody but staff", async () => {
    const trainingId = draft.trainingIds[0]!;
    expect((await get(`/api/trainingItems?training=${trainingId}`)).body.data).toEqual([]);
    expect((await get(`/api/trainingItems?training=${trainingId}`, tenant.admin.token)).body.data).toEqual(
      [],
    );
    expect(ids((await get(`/api/trainingItems?training=${trainingId}`, staff.token)).body)).toEqual(
      draft.rows.items.filter((i) => i.training_id === trainingId).map((i) => i.id),
    );
    expect((await get("/api/trainingItems?per_page=1", staff.token)).body.meta.total).toBe(36 + 12);
  });

  it("rejects unknown filter values with 422 listing every failing field", async () => {
    const { res, body } = await get(
      "/api/trainingItems?type=essay&skill=cooking&level=a1&training=bad%20id&page=x",
    );
    expect(res.status).toBe(422);
    expect(body.code).toBe("validation_failed");
    expect(body.errors.map((e: any) => e.path).sort()).toEqual([
      "level",
      "page",
      "skill",
      "training",
      "type",
    ]);
    expect(body.errors.find((e: any) => e.path === "type").message).toContain("multiple_choice");
  });
});
