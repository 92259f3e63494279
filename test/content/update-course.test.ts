import { beforeAll, describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { courseTagsOf, createCourse, updateCourseRow } from "../helpers/catalog";
import { createPlatformAdmin, createTenant, mintToken, type Tenant, type TestUser } from "../helpers/tenants";

let tenant: Tenant;
let staff: TestUser;

beforeAll(async () => {
  [tenant, staff] = await Promise.all([createTenant(), createPlatformAdmin()]);
});

function patch(id: string, body: unknown, token = staff.token) {
  return callJson(`/api/courses/${id}`, { method: "PATCH", token, body });
}

describe("PATCH /api/courses/{id}", () => {
  it("edits title, description and tags, and answers the course with its outline", async () => {
    const course = await createCourse({ tags: ["old-tag"], lessons: 3 });
    const { res, body } = await patch(course.id, {
      title: "  Spanish for Travellers  ",
      description: "Learn what you need on the road.",
      tags: ["travel", "beginner", "travel"],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(body).toMatchObject({
      id: course.id,
      slug: course.slug,
      title: "Spanish for Travellers",
      description: "Learn what you need on the road.",
      tags: ["travel", "beginner"],
    });
    expect(body.lessons.map((l: any) => l.id)).toEqual(course.lessonIds);
    expect(body.updated_at).not.toBe(course.rows.course.updated_at);

    // Tags live in course_tags too, so `?tag=` follows the edit.
    const byNew = await callJson("/api/courses?tag=travel&q=travellers", { token: tenant.learner.token });
    expect(byNew.body.data.map((c: any) => c.id)).toEqual([course.id]);
    expect(await courseTagsOf(course.id)).toEqual(["beginner", "travel"]);
    const detail = await callJson(`/api/courses/${course.id}`, { token: tenant.learner.token });
    expect(detail.body.title).toBe("Spanish for Travellers");

    // An empty list removes every tag; other fields stay as they are.
    const cleared = await patch(course.id, { tags: [] });
    expect(cleared.body).toMatchObject({ tags: [], title: "Spanish for Travellers" });
    expect(await courseTagsOf(course.id)).toEqual([]);
  });

  it("publishes a draft (setting published_at) and unpublishes it (clearing it)", async () => {
    const course = await createCourse({ published: false });
    expect((await callJson(`/api/courses/${course.id}`, { token: tenant.learner.token })).res.status).toBe(
      404,
    );

    const published = await patch(course.id, { published: true });
    expect(published.res.status).toBe(200);
    expect(published.body.published).toBe(true);
    expect(published.body.published_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Math.abs(Date.parse(published.body.published_at) - Date.now())).toBeLessThan(60_000);
    expect((await callJson(`/api/courses/${course.id}`, { token: tenant.learner.token })).res.status).toBe(
      200,
    );

    // Publishing again keeps the original date.
    await updateCourseRow(course.id, { publishedAt: "2026-01-01T00:00:00Z" });
    const again = await patch(course.id, { published: true, title: "Still live" });
    expect(again.body).toMatchObject({
      published: true,
      published_at: "2026-01-01T00:00:00Z",
      title: "Still live",
    });

    const unpublished = await patch(course.id, { published: false });
    expect(unpublished.body).toMatchObject({ published: false, published_at: null });
    expect((await callJson(`/api/courses/${course.id}`, { token: tenant.learner.token })).res.status).toBe(
      404,
    );
    expect(
      (await callJson(`/api/lessons?course=${course.id}`, { token: tenant.learner.token })).body.data,
    ).toEqual([]);
  });

  it("is for platform staff only: 403 naming content:write for everybody else", async () => {
    const course = await createCourse({ title: "Untouched" });
    for (const user of [tenant.admin, tenant.instructor, tenant.learner]) {
      const { res, body } = await patch(course.id, { title: "Hijacked" }, user.token);
      expect(res.status, user.role).toBe(403);
      expect(body.code).toBe("missing_ability");
      expect(body.detail).toContain("`content:write`");
    }
    const { token } = await mintToken(staff, ["content:read"]);
    expect((await patch(course.id, { title: "Hijacked" }, token)).res.status).toBe(403);
    expect((await callJson(`/api/courses/${course.id}`, { token: tenant.learner.token })).body.title).toBe(
      "Untouched",
    );
  });

  it("refuses control and bidirectional formatting characters in the title and description (422, unchanged)", async () => {
    const course = await createCourse({ title: "Plain" });
    for (const [field, value] of [
      ["title", "Invoice\u202Efdp.exe"],
      ["title", "two\nlines"],
      ["description", "nul\u0000byte"],
      ["description", "isolate\u2066here"],
    ] as const) {
      const { res, body } = await patch(course.id, { [field]: value });
      expect(res.status, `${field}=${JSON.stringify(value)}`).toBe(422);
      expect(body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    const multiline = await patch(course.id, { description: "First line.\nSecond line.\tTabbed." });
    expect(multiline.res.status).toBe(200);
    expect(multiline.body.description).toBe("First line.\nSecond line.\tTabbed.");
    expect(multiline.body.title).toBe("Plain");
  });

  it("answers 404 for an unknown course and creates nothing", async () => {
    const { res, body } = await patch("crs_missing", { title: "x", tags: ["a"] });
    expect(res.status).toBe(404);
    expect(body.code).toBe("not_found");
    expect(await courseTagsOf("crs_missing")).toEqual([]);
  });

  it.each([
    [{ title: "x", slug: "new-slug" }, ["slug"]],
    [{ published: "yes" }, ["published"]],
    [{ title: "" }, ["title"]],
    [{ title: "x".repeat(201) }, ["title"]],
    [{ description: "x".repeat(5001) }, ["description"]],
    [{ tags: ["Not A Tag"] }, ["tags.0"]],
    [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, ["tags"]],
    [{ tags: "travel" }, ["tags"]],
    [{ title: 5, published: null, owner: "me" }, ["owner", "published", "title"]],
  ])("rejects %j with 422 listing %j and changes nothing", async (body, fields) => {
    const course = await createCourse({ title: "Original" });
    const { res, body: problem } = await patch(course.id, body);
    expect(res.status).toBe(422);
    expect(problem.code).toBe("validation_failed");
    expect(problem.errors.map((e: any) => e.path).sort()).toEqual(fields);
    expect((await callJson(`/api/courses/${course.id}`, { token: tenant.learner.token })).body.title).toBe(
      "Original",
    );
  });

  it("rejects an empty body with 422", async () => {
    const course = await createCourse();
    const { res, body } = await patch(course.id, {});
    expect(res.status).toBe(422);
    expect(body.detail).toContain("at least one");
  });
});
