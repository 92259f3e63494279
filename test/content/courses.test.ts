import { beforeAll, describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { createCourse } from "../helpers/catalog";
import { createPlatformAdmin, createTenant, mintToken, type Tenant, type TestUser } from "../helpers/tenants";

let tenant: Tenant;
let staff: TestUser;
let seq = 0;
/** A tag no other test uses, so each test sees only its own courses. */
const freshTag = () => `t${Date.now().toString(36)}-${++seq}`;
const ids = (body: any) => body.data.map((c: any) => c.id);

beforeAll(async () => {
  [tenant, staff] = await Promise.all([createTenant(), createPlatformAdmin()]);
});

describe("GET /api/courses", () => {
  it("lists courses in the documented shape inside the list envelope", async () => {
    const tag = freshTag();
    const course = await createCourse({
      tags: [tag, "travel"],
      language: "fr",
      from: "A2",
      to: "B1",
      lessons: 3,
      blocksPerLesson: 2,
      itemsPerBlock: 4,
    });
    const { res, body } = await callJson(`/api/courses?tag=${tag}`, { token: tenant.learner.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(body.meta).toEqual({ total: 1, per_page: 25, current_page: 1, last_page: 1 });
    expect(body.links.prev).toBeNull();
    expect(body.links.next).toBeNull();
    const [wire] = body.data;
    expect(wire).toEqual({
      id: course.id,
      slug: course.slug,
      title: course.title,
      description: expect.any(String),
      target_language: "fr",
      source_language: "en",
      cefr_from: "A2",
      cefr_to: "B1",
      published: true,
      published_at: "2026-03-02T10:00:00Z",
      lesson_count: 3,
      item_count: 24,
      estimated_minutes: course.rows.course.estimated_minutes,
      tags: [tag, "travel"],
      created_at: "2026-03-01T10:00:00Z",
      updated_at: expect.any(String),
    });
    expect(wire.estimated_minutes).toBeGreaterThan(0);
  });

  it("pages with absolute links that keep every filter", async () => {
    const tag = freshTag();
    const made = [];
    for (let i = 0; i < 5; i++)
      made.push(
        await createCourse({
          tags: [tag],
          title: `Paging ${tag} ${i}`,
          lessons: 1,
          blocksPerLesson: 1,
          itemsPerBlock: 1,
        }),
      );
    const first = await callJson(`/api/courses?tag=${tag}&per_page=2&sort=title`, {
      token: tenant.learner.token,
    });
    expect(first.body.meta).toEqual({ total: 5, per_page: 2, current_page: 1, last_page: 3 });
    expect(ids(first.body)).toEqual([made[0]!.id, made[1]!.id]);
    const next = new URL(first.body.links.next);
    expect(Object.fromEntries(next.searchParams)).toEqual({ tag, per_page: "2", sort: "title", page: "2" });
    const second = await callJson(first.body.links.next, { token: tenant.learner.token });
    expect(ids(second.body)).toEqual([made[2]!.id, made[3]!.id]);
    const last = await callJson(first.body.links.last, { token: tenant.learner.token });
    expect(ids(last.body)).toEqual([made[4]!.id]);
    expect(last.body.links.next).toBeNull();
    const past = await callJson(`/api/courses?tag=${tag}&per_page=2&page=7`, { token: tenant.learner.token });
    expect(past.res.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta.total).toBe(5);
  });

  it("filters by target language (exact, case-insensitive BCP 47)", async () => {
    const tag = freshTag();
    const es = await createCourse({ tags: [tag], language: "es" });
    const ptBr = await createCourse({ tags: [tag], language: "pt-BR" });
    await createCourse({ tags: [tag], language: "pt" });
    const q = (language: string) =>
      callJson(`/api/courses?tag=${tag}&language=${language}`, { token: tenant.learner.token });
    expect(ids((await q("es")).body)).toEqual([es.id]);
    expect(ids((await q("ES")).body)).toEqual([es.id]);
    expect(ids((await q("pt-BR")).body)).toEqual([ptBr.id]);
    expect(ids((await q("pt-br")).body)).toEqual([ptBr.id]);
    expect((await q("de")).body.data).toEqual([]);
  });

  it("filters by CEFR level: courses whose range covers it", async () => {
    const tag = freshTag();
    const a1 = await createCourse({ tags: [tag], from: "A1", to: "A1", title: "1" });
    const a2b1 = await createCourse({ tags: [tag], from: "A2", to: "B1", title: "2" });
    const b1c1 = await createCourse({ tags: [tag], from: "B1", to: "C1", title: "3" });
    const q = async (level: string) =>
      ids((await callJson(`/api/courses?tag=${tag}&level=${level}`, { token: tenant.learner.token })).body);
    expect(await q("A1")).toEqual([a1.id]);
    expect(await q("A2")).toEqual([a2b1.id]);
    expect(await q("B1")).toEqual([a2b1.id, b1c1.id]);
    expect(await q("B2")).toEqual([b1c1.id]);
    expect(await q("C2")).toEqual([]);
  });

  it("searches titles case-insensitively with literal wildcards", async () => {
    const tag = freshTag();
    const business = await createCourse({ tags: [tag], title: "Business Spanish for Meetings" });
    const percent = await createCourse({ tags: [tag], title: "Spanish 100% immersion" });
    const underscore = await createCourse({ tags: [tag], title: "Snake_case Spanish" });
    const q = async (text: string) =>
      ids(
        (
          await callJson(`/api/courses?tag=${tag}&q=${encodeURIComponent(text)}`, {
            token: tenant.learner.token,
          })
        ).body,
      ).sort();
    expect(await q("business")).toEqual([business.id]);
    expect(await q("SPANISH")).toEqual([business.id, percent.id, underscore.id].sort());
    expect(await q("0%")).toEqual([percent.id]);
    expect(await q("% i")).toEqual([percent.id]);
    expect(await q("e_c")).toEqual([underscore.id]);
    expect(await q("s_s")).toEqual([]);
    expect(await q("  meetings  ")).toEqual([business.id]);
  });

  it("filters by tag through course_tags", async () => {
    const tag = freshTag();
    const other = freshTag();
    const both = await createCourse({ tags: [tag, other] });
    const one = await createCourse({ tags: [tag] });
    expect(ids((await callJson(`/api/courses?tag=${other}`, { token: tenant.learner.token })).body)).toEqual([
      both.id,
    ]);
    expect(
      ids(
        (await callJson(`/api/courses?tag=${tag}&sort=created_at`, { token: tenant.learner.token })).body,
      ).sort(),
    ).toEqual([both.id, one.id].sort());
    expect(
      (await callJson(`/api/courses?tag=no-such-tag-${tag}`, { token: tenant.learner.token })).body.data,
    ).toEqual([]);
  });

  it("sorts by title, created_at and published_at in both directions, ties broken by id", async () => {
    const tag = freshTag();
    const b = await createCourse({
      tags: [tag],
      title: "beta",
      createdAt: "2026-01-02T00:00:00Z",
      publishedAt: "2026-02-03T00:00:00Z",
    });
    const a = await createCourse({
      tags: [tag],
      title: "Alpha",
      createdAt: "2026-01-03T00:00:00Z",
      publishedAt: "2026-02-01T00:00:00Z",
    });
    const c = await createCourse({
      tags: [tag],
      title: "Gamma",
      createdAt: "2026-01-01T00:00:00Z",
      publishedAt: "2026-02-02T00:00:00Z",
    });
    const tie1 = await createCourse({
      tags: [tag],
      title: "Delta",
      createdAt: "2026-01-04T00:00:00Z",
      publishedAt: "2026-02-04T00:00:00Z",
    });
    const tie2 = await createCourse({
      tags: [tag],
      title: "Delta",
      createdAt: "2026-01-04T00:00:00Z",
      publishedAt: "2026-02-04T00:00:00Z",
    });
    const [t1, t2] = [tie1.id, tie2.id].sort();
    const sorted = async (sort?: string) =>
      ids(
        (
          await callJson(`/api/courses?tag=${tag}${sort ? `&sort=${sort}` : ""}`, {
            token: tenant.learner.token,
          })
        ).body,
      );
    // Title order ignores case.
    expect(await sorted()).toEqual([a.id, b.id, t1, t2, c.id]);
    expect(await sorted("title")).toEqual([a.id, b.id, t1, t2, c.id]);
    expect(await sorted("-title")).toEqual([c.id, t2, t1, b.id, a.id]);
    expect(await sorted("created_at")).toEqual([c.id, b.id, a.id, t1, t2]);
    expect(await sorted("-created_at")).toEqual([t2, t1, a.id, b.id, c.id]);
    expect(await sorted("published_at")).toEqual([a.id, c.id, b.id, t1, t2]);
    expect(await sorted("-published_at")).toEqual([t2, t1, b.id, c.id, a.id]);
  });

  it("puts unpublished courses last when platform staff sort by published_at", async () => {
    const tag = freshTag();
    const draft = await createCourse({ tags: [tag], published: false });
    const live = await createCourse({ tags: [tag] });
    expect(
      ids((await callJson(`/api/courses?tag=${tag}&sort=published_at`, { token: staff.token })).body),
    ).toEqual([live.id, draft.id]);
    expect(
      ids((await callJson(`/api/courses?tag=${tag}&sort=-published_at`, { token: staff.token })).body),
    ).toEqual([live.id, draft.id]);
  });

  it.each([
    ["language=e", ["language"]],
    ["language=english!", ["language"]],
    ["language=es_ES", ["language"]],
    ["level=A3", ["level"]],
    ["level=beginner", ["level"]],
    ["published=yes", ["published"]],
    ["q=a", ["q"]],
    ["q=%20%20b%20", ["q"]],
    [`q=${"x".repeat(101)}`, ["q"]],
    ["tag=Not%20A%20Tag", ["tag"]],
    ["sort=name", ["sort"]],
    ["sort=-id", ["sort"]],
    [
      "level=Z9&sort=up&language=%3F&published=maybe&q=x&tag=_&page=0&per_page=101",
      ["language", "level", "page", "per_page", "published", "q", "sort", "tag"],
    ],
  ])("rejects %s with 422 listing every failing field", async (query, fields) => {
    const { res, body } = await callJson(`/api/courses?${query}`, { token: tenant.learner.token });
    expect(res.status).toBe(422);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(body.code).toBe("validation_failed");
    expect(body.errors.map((e: any) => e.path).sort()).toEqual(fields);
  });

  it("answers 401 without a token and 403 naming content:read without the ability", async () => {
    const none = await callJson("/api/courses");
    expect(none.res.status).toBe(401);
    const { token } = await mintToken(tenant.admin, ["tokens:read"]);
    for (const path of [
      "/api/courses",
      "/api/courses/crs_x",
      "/api/lessons",
      "/api/trainings",
      "/api/trainingItems",
    ]) {
      const { res, body } = await callJson(path, { token });
      expect(res.status, path).toBe(403);
      expect(body.code).toBe("missing_ability");
      expect(body.detail).toContain("`content:read`");
    }
  });

  it("accepts a narrow content:read token", async () => {
    const tag = freshTag();
    const course = await createCourse({ tags: [tag] });
    const { token } = await mintToken(tenant.learner, ["content:read"]);
    const { res, body } = await callJson(`/api/courses?tag=${tag}`, { token });
    expect(res.status).toBe(200);
    expect(ids(body)).toEqual([course.id]);
  });
});

describe("drafts are visible to platform staff only", () => {
  it("hides drafts from learners and institution admins, shows them to staff", async () => {
    const tag = freshTag();
    const live = await createCourse({ tags: [tag], title: "A live" });
    const draft = await createCourse({ tags: [tag], title: "B draft", published: false });
    for (const user of [tenant.learner, tenant.instructor, tenant.admin]) {
      const all = await callJson(`/api/courses?tag=${tag}`, { token: user.token });
      expect(ids(all.body), user.role).toEqual([live.id]);
      expect(all.body.meta.total).toBe(1);
      const drafts = await callJson(`/api/courses?tag=${tag}&published=false`, { token: user.token });
      expect(drafts.res.status).toBe(200);
      expect(drafts.body.data).toEqual([]);
      expect(drafts.body.meta.total).toBe(0);
      const one = await callJson(`/api/courses/${draft.id}`, { token: user.token });
      expect(one.res.status).toBe(404);
      expect(one.body.code).toBe("not_found");
    }
    const staffAll = await callJson(`/api/courses?tag=${tag}`, { token: staff.token });
    expect(ids(staffAll.body)).toEqual([live.id, draft.id]);
    expect(staffAll.body.data[1]).toMatchObject({ published: false, published_at: null });
    expect(
      ids((await callJson(`/api/courses?tag=${tag}&published=false`, { token: staff.token })).body),
    ).toEqual([draft.id]);
    expect(
      ids((await callJson(`/api/courses?tag=${tag}&published=true`, { token: staff.token })).body),
    ).toEqual([live.id]);
    expect((await callJson(`/api/courses/${draft.id}`, { token: staff.token })).res.status).toBe(200);
  });

  it("treats a platform admin's token without content:write like everybody else", async () => {
    const tag = freshTag();
    const draft = await createCourse({ tags: [tag], published: false });
    const { token } = await mintToken(staff, ["content:read"]);
    expect((await callJson(`/api/courses?tag=${tag}`, { token })).body.data).toEqual([]);
    expect((await callJson(`/api/courses/${draft.id}`, { token })).res.status).toBe(404);
  });
});

describe("GET /api/courses/{id}", () => {
  it("returns the course with its whole lesson outline in order", async () => {
    const course = await createCourse({
      lessons: 9,
      blocksPerLesson: 3,
      itemsPerBlock: 2,
      from: "A1",
      to: "B1",
    });
    const { res, body } = await callJson(`/api/courses/${course.id}`, { token: tenant.learner.token });
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      id: course.id,
      slug: course.slug,
      lesson_count: 9,
      item_count: 54,
      cefr_from: "A1",
      cefr_to: "B1",
    });
    expect(body.lessons).toHaveLength(9);
    expect(body.lessons.map((l: any) => l.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(body.lessons.map((l: any) => l.id)).toEqual(course.lessonIds);
    expect(Object.keys(body.lessons[0]).sort()).toEqual([
      "cefr_level",
      "estimated_minutes",
      "id",
      "item_count",
      "objectives",
      "position",
      "title",
    ]);
    expect(body.lessons[0]).toMatchObject({ cefr_level: "A1", item_count: 6 });
    expect(body.lessons[0].objectives.length).toBeGreaterThanOrEqual(2);
    // Levels rise through the range; the outline adds up to the course's totals.
    expect(body.lessons.map((l: any) => l.cefr_level)).toEqual([
      "A1",
      "A1",
      "A1",
      "A2",
      "A2",
      "A2",
      "B1",
      "B1",
      "B1",
    ]);
    expect(body.lessons.reduce((s: number, l: any) => s + l.estimated_minutes, 0)).toBe(
      body.estimated_minutes,
    );
    expect(body.lessons.reduce((s: number, l: any) => s + l.item_count, 0)).toBe(body.item_count);
  });

  it("answers 404 for an unknown id", async () => {
    const { res, body } = await callJson("/api/courses/crs_nope", { token: tenant.learner.token });
    expect(res.status).toBe(404);
    expect(body.code).toBe("not_found");
  });
});
