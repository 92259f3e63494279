import { describe, expect, it } from "vitest";
import { purgeEdgeCache } from "../../src/platform/http/edge-cache";
import { callPublic, createCourse } from "../helpers/catalog";
import { freshIp } from "../helpers/tenants";

const CACHE_CONTROL = "public, max-age=60, s-maxage=300, stale-while-revalidate=600";
let seq = 0;
const freshTag = () => `p${Date.now().toString(36)}-${++seq}`;

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function getJson(path: string, ip = freshIp(), headers: Record<string, string> = {}) {
  const res = await callPublic(path, { ip, headers });
  const text = await res.text();
  return { res, text, body: text ? JSON.parse(text) : undefined };
}

describe("GET /api/public/courses/{slug}", () => {
  it("serves a published course with its lesson outline, no token needed", async () => {
    const course = await createCourse({ lessons: 4, blocksPerLesson: 2, itemsPerBlock: 2, tags: ["travel"] });
    const { res, text, body } = await getJson(`/api/public/courses/${course.slug}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/json");
    expect(body).toMatchObject({
      id: course.id,
      slug: course.slug,
      title: course.title,
      published: true,
      lesson_count: 4,
      tags: ["travel"],
    });
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
    // Served for the edge.
    expect(res.headers.get("Cache-Control")).toBe(CACHE_CONTROL);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(res.headers.get("ETag")).toBe(`"${await sha256Hex(text)}"`);
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_/);
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(res.headers.get("X-RateLimit-Limit")).toBeNull();
  });

  it("answers 404 for a draft's slug and an unknown slug, with CORS and no caching", async () => {
    const draft = await createCourse({ published: false });
    for (const slug of [draft.slug, "no-such-course"]) {
      const { res, body } = await getJson(`/api/public/courses/${slug}`);
      expect(res.status).toBe(404);
      expect(res.headers.get("Content-Type")).toBe("application/problem+json");
      expect(body.code).toBe("not_found");
      expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
      expect(res.headers.get("ETag")).toBeNull();
      expect(res.headers.get("Cache-Control")).toBe("no-store");
      expect(JSON.stringify(body)).not.toContain(draft.title);
    }
  });

  it("answers 304 without a body when If-None-Match matches, on a miss and on a hit", async () => {
    const course = await createCourse();
    const path = `/api/public/courses/${course.slug}`;
    const first = await getJson(path);
    const etag = first.res.headers.get("ETag")!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    for (const header of [etag, `W/${etag}`, `"abc", ${etag}`, "*"]) {
      const res = await callPublic(path, { ip: freshIp(), headers: { "If-None-Match": header } });
      expect(res.status, header).toBe(304);
      expect(await res.text()).toBe("");
      expect(res.headers.get("ETag")).toBe(etag);
      expect(res.headers.get("Cache-Control")).toBe(CACHE_CONTROL);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    }
    const stale = await getJson(path, freshIp(), { "If-None-Match": '"0000"' });
    expect(stale.res.status).toBe(200);
    expect(stale.text).toBe(first.text);

    // A 304 on a miss too: a new course, asked for the first time with the right validator.
    const other = await createCourse();
    const otherPath = `/api/public/courses/${other.slug}`;
    const { res: probe } = await getJson(otherPath); // learn the ETag
    const otherEtag = probe.headers.get("ETag")!;
    await purgeEdgeCache([new URL(otherPath, "https://api.lingua.test").toString()]);
    const miss = await callPublic(otherPath, { ip: freshIp(), headers: { "If-None-Match": otherEtag } });
    expect(miss.status).toBe(304);
    expect(miss.headers.get("X-Cache")).toBe("MISS");
  });

  it("answers HEAD like GET without a body, and CORS preflights", async () => {
    const course = await createCourse();
    const head = await callPublic(`/api/public/courses/${course.slug}`, { ip: freshIp(), method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("ETag")).toMatch(/^"[0-9a-f]{64}"$/);
    expect(await head.text()).toBe("");
    const preflight = await callPublic("/api/public/courses", {
      ip: freshIp(),
      method: "OPTIONS",
      headers: {
        Origin: "https://school.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "if-none-match",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(preflight.headers.get("Access-Control-Allow-Methods")).toContain("GET");
    expect(preflight.headers.get("Access-Control-Allow-Headers")).toContain("If-None-Match");
  });

  it("sends one set of CORS headers on every kind of answer, and the preflight's on preflights", async () => {
    const course = await createCourse();
    const path = `/api/public/courses/${course.slug}`;
    const corsOf = (res: Response) =>
      Object.fromEntries(
        [...res.headers].filter(([name]) => name.startsWith("access-control-") || name === "vary"),
      );
    const miss = await getJson(path);
    const hit = await getJson(path);
    expect(hit.res.headers.get("X-Cache")).toBe("HIT");
    const notModified = await getJson(path, freshIp(), { "If-None-Match": miss.res.headers.get("ETag")! });
    expect(notModified.res.status).toBe(304);
    const notFound = await getJson("/api/public/courses/no-such-course");
    const invalid = await getJson("/api/public/courses?per_page=1000");
    expect(invalid.res.status).toBe(422);
    const everyAnswer = {
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "ETag,Age,Retry-After,X-Request-Id,X-Cache,X-D1-Bookmark",
    };
    for (const answer of [miss, hit, notModified, notFound, invalid]) {
      expect(corsOf(answer.res), `${answer.res.status} ${answer.res.headers.get("X-Cache")}`).toEqual(
        everyAnswer,
      );
    }

    const preflight = await callPublic(path, {
      ip: freshIp(),
      method: "OPTIONS",
      headers: {
        Origin: "https://school.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "if-none-match, x-other",
      },
    });
    expect(preflight.status).toBe(204);
    expect(await preflight.text()).toBe("");
    expect(corsOf(preflight)).toEqual({
      ...everyAnswer,
      "access-control-allow-methods": "GET,HEAD",
      "access-control-allow-headers": "If-None-Match,X-D1-Bookmark",
      "access-control-max-age": "86400",
      vary: "Access-Control-Request-Headers",
    });
  });
});

describe("GET /api/public/courses", () => {
  it("lists published courses only, in the list envelope, with the edge headers", async () => {
    const tag = freshTag();
    const live = await createCourse({ tags: [tag], title: "Live one" });
    await createCourse({ tags: [tag], title: "Draft one", published: false });
    const { res, text, body } = await getJson(`/api/public/courses?tag=${tag}`);
    expect(res.status).toBe(200);
    expect(body.data.map((c: any) => c.id)).toEqual([live.id]);
    expect(body.meta).toEqual({ total: 1, per_page: 25, current_page: 1, last_page: 1 });
    expect(body.links.first).toBe(`https://api.lingua.test/api/public/courses?tag=${tag}&page=1`);
    expect(res.headers.get("Cache-Control")).toBe(CACHE_CONTROL);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(res.headers.get("Access-Control-Expose-Headers")).toContain("ETag");
    expect(res.headers.get("ETag")).toBe(`"${await sha256Hex(text)}"`);
  });

  it("supports the filters and sorts of the authenticated list", async () => {
    const tag = freshTag();
    const a = await createCourse({
      tags: [tag],
      title: "Alpha Spanish",
      language: "es",
      from: "A1",
      to: "A2",
      createdAt: "2026-01-02T00:00:00Z",
    });
    const b = await createCourse({
      tags: [tag],
      title: "Beta French",
      language: "fr",
      from: "B1",
      to: "B2",
      createdAt: "2026-01-01T00:00:00Z",
    });
    const list = async (query: string) =>
      (await getJson(`/api/public/courses?tag=${tag}&${query}`)).body.data.map((c: any) => c.id);
    expect(await list("language=fr")).toEqual([b.id]);
    expect(await list("level=A2")).toEqual([a.id]);
    expect(await list("q=spanish")).toEqual([a.id]);
    expect(await list("sort=-title")).toEqual([b.id, a.id]);
    expect(await list("sort=created_at")).toEqual([b.id, a.id]);
    expect(await list("per_page=1&page=2")).toEqual([b.id]);
  });

  it("gives equivalent URLs one cache entry and one body, whatever the parameter order or extra parameters", async () => {
    const tag = freshTag();
    await createCourse({ tags: [tag] });
    const one = await getJson(`/api/public/courses?tag=${tag}&sort=title&per_page=5`);
    const two = await getJson(`/api/public/courses?per_page=5&utm_source=newsletter&sort=title&tag=${tag}`);
    expect(one.res.headers.get("X-Cache")).toBe("MISS");
    expect(two.res.headers.get("X-Cache")).toBe("HIT");
    expect(two.text).toBe(one.text);
    expect(two.res.headers.get("ETag")).toBe(one.res.headers.get("ETag"));
    expect(new URL(one.body.links.first).search).toBe(`?per_page=5&sort=title&tag=${tag}&page=1`);
  });

  it("rejects invalid filters with 422 listing every field, and ignores `published`", async () => {
    const { res, body } = await getJson(
      "/api/public/courses?language=!!&level=X1&sort=rank&q=a&tag=A%20B&per_page=1000",
    );
    expect(res.status).toBe(422);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(body.errors.map((e: any) => e.path).sort()).toEqual([
      "language",
      "level",
      "per_page",
      "q",
      "sort",
      "tag",
    ]);
    const tag = freshTag();
    await createCourse({ tags: [tag], published: false });
    const drafts = await getJson(`/api/public/courses?tag=${tag}&published=false`);
    expect(drafts.res.status).toBe(200);
    expect(drafts.body.data).toEqual([]);
  });

  it("is not in the way of authenticated routes: no token is read, none is needed", async () => {
    const res = await callPublic(`/api/public/courses?tag=${freshTag()}`, {
      ip: freshIp(),
      headers: { Authorization: "Bearer not-a-token" },
    });
    expect(res.status).toBe(200);
  });

  it("is described in the OpenAPI document as public", async () => {
    const res = await callPublic("/api/openapi.json", { ip: freshIp() });
    const doc = await res.json<any>();
    for (const path of ["/api/public/courses", "/api/public/courses/{slug}"]) {
      const op = doc.paths[path].get;
      expect(op.security).toEqual([]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "304", "404", "429"]));
      expect(op.responses["200"].headers.ETag).toBeDefined();
    }
    for (const [path, method] of [
      ["/api/courses", "get"],
      ["/api/courses/{id}", "get"],
      ["/api/courses/{id}", "patch"],
      ["/api/lessons", "get"],
      ["/api/trainings", "get"],
      ["/api/trainingItems", "get"],
    ] as const) {
      expect(doc.paths[path][method]["x-required-ability"], `${method} ${path}`).toBe(
        method === "patch" ? "content:write" : "content:read",
      );
    }
  });
});
