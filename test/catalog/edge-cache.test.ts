import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { withEveryPageAMiss } from "../../scripts/bench/worker-wrappers.mjs";
import worker from "../../src/index";
import { BASE, callJson, fetchWorker } from "../helpers/api";
import { callPublic, createCourse, untouchableDatabase, updateCourseRow } from "../helpers/catalog";
import { createPlatformAdmin, freshIp, type TestUser } from "../helpers/tenants";

let staff: TestUser;

beforeAll(async () => {
  staff = await createPlatformAdmin();
});

async function read(path: string, bindings?: Partial<Cloudflare.Env>) {
  const res = await callPublic(path, { ip: freshIp(), bindings });
  const text = await res.text();
  return {
    res,
    text,
    body: text && res.headers.get("Content-Type")?.includes("json") ? JSON.parse(text) : undefined,
  };
}

function patch(id: string, body: unknown) {
  return callJson(`/api/courses/${id}`, { method: "PATCH", token: staff.token, body });
}

describe("the edge cache (Workers Cache API)", () => {
  it("is a miss every time behind the bench's every-page-a-miss wrapper, still with ETag and 304", async () => {
    const course = await createCourse({ title: "Before" });
    const path = `/api/public/courses/${course.slug}`;
    expect((await read(path)).res.headers.get("X-Cache")).toBe("MISS");
    expect((await read(path)).res.headers.get("X-Cache")).toBe("HIT"); // this isolate and the colo now hold a copy

    await updateCourseRow(course.id, { title: "After" });
    const missing = withEveryPageAMiss(worker);
    const readMissing = async (headers: Record<string, string> = {}) => {
      const ctx = createExecutionContext();
      const res = await fetchWorker(
        new Request(new URL(path, BASE), { headers: { "CF-Connecting-IP": freshIp(), ...headers } }),
        env,
        ctx,
        missing,
      );
      await waitOnExecutionContext(ctx);
      return res;
    };
    const first = await readMissing();
    const second = await readMissing();
    for (const res of [first, second]) {
      expect(res.headers.get("X-Cache")).toBe("MISS");
      expect((await res.json<{ title: string }>()).title).toBe("After");
      expect(res.headers.get("Cache-Control")).toBe(
        "public, max-age=60, s-maxage=300, stale-while-revalidate=600",
      );
    }
    expect(second.headers.get("ETag")).toBe(first.headers.get("ETag"));
    const conditional = await readMissing({ "If-None-Match": first.headers.get("ETag")! });
    expect(conditional.status).toBe(304);
    await updateCourseRow(course.id, { title: "Later" });
    expect((await (await readMissing()).json<{ title: string }>()).title).toBe("Later");
  });

  it("answers a repeat request from the cache with no D1 query at all", async () => {
    const course = await createCourse({ title: "Cached title" });
    const path = `/api/public/courses/${course.slug}`;
    const first = await read(path);
    expect(first.res.headers.get("X-Cache")).toBe("MISS");
    expect(first.body.title).toBe("Cached title");

    // Change the row behind the API's back: the cached copy is still what is served…
    await updateCourseRow(course.id, { title: "Renamed in D1" });
    const second = await read(path);
    expect(second.res.status).toBe(200);
    expect(second.res.headers.get("X-Cache")).toBe("HIT");
    expect(second.text).toBe(first.text);
    expect(second.res.headers.get("ETag")).toBe(first.res.headers.get("ETag"));
    expect(second.res.headers.get("Cache-Control")).toBe(
      "public, max-age=60, s-maxage=300, stale-while-revalidate=600",
    );
    expect(second.res.headers.get("Access-Control-Allow-Origin")).toBe("*");

    // …and with a D1 binding that fails on any use, the hit (and its 304) still answer.
    const spy = untouchableDatabase();
    const third = await read(path, { DB: spy.db });
    expect(third.res.status).toBe(200);
    expect(third.body.title).toBe("Cached title");
    const conditional = await callPublic(path, {
      ip: freshIp(),
      bindings: { DB: spy.db },
      headers: { "If-None-Match": first.res.headers.get("ETag")! },
    });
    expect(conditional.status).toBe(304);
    expect(spy.uses()).toBe(0);

    // The same holds for list pages.
    const list = `/api/public/courses?q=${encodeURIComponent("Cached title")}`;
    await updateCourseRow(course.id, { title: "Cached title" });
    const missed = await read(list);
    expect(missed.body.data.map((c: any) => c.id)).toEqual([course.id]);
    const hit = await read(list, { DB: spy.db });
    expect(hit.res.headers.get("X-Cache")).toBe("HIT");
    expect(hit.text).toBe(missed.text);
    expect(spy.uses()).toBe(0);
  });

  it("stores each copy for 60 s and reports its Age", async () => {
    const course = await createCourse();
    const path = `/api/public/courses/${course.slug}`;
    await read(path);
    const stored = await caches.default.match(`https://api.lingua.test${path}`);
    expect(stored).toBeDefined();
    expect(stored!.headers.get("Cache-Control")).toBe("public, max-age=60");
    await stored!.text();
    const hit = await read(path);
    expect(hit.res.headers.get("X-Cache")).toBe("HIT");
    const age = Number(hit.res.headers.get("Age") ?? "0");
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThanOrEqual(60);
  });

  it("serves a copy another isolate stored in the colo's cache, with its age", async () => {
    const course = await createCourse({ title: "Stored elsewhere" });
    const path = `/api/public/courses/${course.slug}`;
    // A copy of the right shape that this course's own page could never be: another course's.
    const other = await createCourse({ title: "Planted copy" });
    const body = (await read(`/api/public/courses/${other.slug}`)).text;
    await caches.default.put(
      `https://api.lingua.test${path}`,
      new Response(body, {
        headers: {
          "Content-Type": "application/json",
          ETag: '"planted"',
          "Cache-Control": "public, max-age=60",
          "X-Lingua-Stored-At": String(Date.now() - 30_000),
        },
      }),
    );
    const hit = await read(path, { DB: untouchableDatabase().db });
    expect(hit.res.headers.get("X-Cache")).toBe("HIT");
    expect(hit.text).toBe(body);
    expect(hit.res.headers.get("ETag")).toBe('"planted"');
    expect(Number(hit.res.headers.get("Age"))).toBeGreaterThanOrEqual(30);
    expect(hit.res.headers.get("X-Lingua-Stored-At")).toBeNull();
  });

  it("keeps a few seconds' copy in the isolate, in front of the colo's cache", async () => {
    const course = await createCourse({ title: "In memory" });
    const path = `/api/public/courses/${course.slug}`;
    const first = await read(path);
    // With the colo's copy gone behind the API's back, the isolate still answers, without D1.
    expect(await caches.default.delete(`https://api.lingua.test${path}`)).toBe(true);
    const second = await read(path, { DB: untouchableDatabase().db });
    expect(second.res.headers.get("X-Cache")).toBe("HIT");
    expect(second.text).toBe(first.text);
  });

  it("answers a memory hit with exactly the headers of the app's answer", async () => {
    const course = await createCourse({ title: "Same headers" });
    const path = `/api/public/courses/${course.slug}?utm_source=mail`;
    const miss = await read(path);
    const hit = await read(path, { DB: untouchableDatabase().db });
    expect(miss.res.headers.get("X-Cache")).toBe("MISS");
    expect(hit.res.headers.get("X-Cache")).toBe("HIT");
    expect(hit.text).toBe(miss.text);
    const names = (res: Response) => [...res.headers.keys()].filter((name) => name !== "age").sort();
    expect(names(hit.res)).toEqual(names(miss.res));
    for (const name of names(miss.res).filter((n) => !["x-cache", "x-request-id"].includes(n))) {
      expect(hit.res.headers.get(name), name).toBe(miss.res.headers.get(name));
    }
    // The encoded body and header templates are shared by every early answer of the copy: a second
    // hit, and a 304 after it, are unchanged by the first.
    const again = await read(path, { DB: untouchableDatabase().db });
    expect(again.text).toBe(miss.text);
    expect(names(again.res)).toEqual(names(miss.res));
    expect(again.res.headers.get("X-Request-Id")).not.toBe(hit.res.headers.get("X-Request-Id"));
    const notModified = await callPublic(path, {
      ip: freshIp(),
      headers: { "If-None-Match": miss.res.headers.get("ETag")! },
    });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("Content-Type")).toBeNull();
    expect(notModified.headers.get("ETag")).toBe(miss.res.headers.get("ETag"));
    const afterNotModified = await read(path);
    expect(afterNotModified.text).toBe(miss.text);
    expect(afterNotModified.res.headers.get("Content-Type")).toBe("application/json");
    expect(hit.res.headers.get("X-Request-Id")).toMatch(/^req_/);
    expect(hit.res.headers.get("X-Request-Id")).not.toBe(miss.res.headers.get("X-Request-Id"));
    // A client's own request id is kept, as on every other response.
    const traced = await callPublic(path, { ip: freshIp(), headers: { "X-Request-Id": "trace-12345678" } });
    expect(traced.headers.get("X-Cache")).toBe("HIT");
    expect(traced.headers.get("X-Request-Id")).toBe("trace-12345678");
  });

  it("does not cache a 404: a slug that becomes public is served at once", async () => {
    const draft = await createCourse({ published: false });
    const path = `/api/public/courses/${draft.slug}`;
    expect((await read(path)).res.status).toBe(404);
    await updateCourseRow(draft.id, { published: true, publishedAt: "2026-05-01T00:00:00Z" });
    const now = await read(path);
    expect(now.res.status).toBe(200);
    expect(now.res.headers.get("X-Cache")).toBe("MISS");
  });

  it("PATCH through the API refreshes the course page and the unfiltered first list pages at once", async () => {
    const course = await createCourse({ title: "AAA Before edit" });
    const page = `/api/public/courses/${course.slug}`;
    const lists = [
      "/api/public/courses",
      "/api/public/courses?page=1",
      "/api/public/courses?per_page=25&page=1",
      "/api/public/courses?per_page=100",
    ];
    const before = await read(page);
    expect(before.body.title).toBe("AAA Before edit");
    for (const list of lists)
      expect((await read(list)).body.data.map((c: any) => c.title)).toContain("AAA Before edit");
    for (const list of lists) expect((await read(list)).res.headers.get("X-Cache")).toBe("HIT");

    const edited = await patch(course.id, { title: "AAA After edit" });
    expect(edited.res.status).toBe(200);

    const after = await read(page);
    expect(after.res.headers.get("X-Cache")).toBe("MISS");
    expect(after.body.title).toBe("AAA After edit");
    expect(after.res.headers.get("ETag")).not.toBe(before.res.headers.get("ETag"));
    for (const list of lists) {
      const fresh = await read(list);
      expect(
        fresh.body.data.map((c: any) => c.title),
        list,
      ).toContain("AAA After edit");
      expect(
        fresh.body.data.map((c: any) => c.title),
        list,
      ).not.toContain("AAA Before edit");
    }

    // Unpublishing removes the page and the list entry at once; publishing again brings them back.
    expect((await patch(course.id, { published: false })).res.status).toBe(200);
    expect((await read(page)).res.status).toBe(404);
    expect((await read("/api/public/courses")).body.data.map((c: any) => c.id)).not.toContain(course.id);
    expect((await patch(course.id, { published: true })).res.status).toBe(200);
    expect((await read(page)).body.title).toBe("AAA After edit");
    expect((await read("/api/public/courses")).body.data.map((c: any) => c.id)).toContain(course.id);
  });
});
