import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  backgroundContext,
  invocationContext,
  observeBookmark,
  sessionBookmark,
  tolerateStaleReads,
  withPrincipal,
} from "../../src/platform/service/context";
import { isBookmark, laterBookmark } from "../../src/platform/service/d1-session";
import { consumeQueue } from "../../src/queue-consumers";
import { runSweeps } from "../../src/scheduled";
import { BASE, call, callJson, fetchWorker } from "../helpers/api";
import { createCourse } from "../helpers/catalog";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant, freshIp } from "../helpers/tenants";

/**
 * D1's Sessions API (docs/design/d1-sessions.md). Local D1 has no replicas, so what is tested is
 * the plumbing: every query runs in a session that starts where it should, and the bookmark goes
 * out on every response and comes back in.
 */

const BOOKMARK = "X-D1-Bookmark";

/**
 * A D1 binding that refuses every query made on it directly and records each session asked of it:
 * a request, queue batch or cron run that works over it ran every query in a session.
 */
function sessionsOnly(real: D1Database) {
  const started: string[] = [];
  const refuse = (what: string) => () => {
    throw new Error(`D1 used outside a session (${what})`);
  };
  const db = {
    prepare: refuse("prepare"),
    batch: refuse("batch"),
    exec: refuse("exec"),
    dump: refuse("dump"),
    withSession(start?: string) {
      started.push(start ?? "(none)");
      return real.withSession(start);
    },
  } as unknown as D1Database;
  return { db, started };
}

function laterOrEqual(later: string | null, earlier: string | null): boolean {
  return laterBookmark(later, earlier) === later;
}

describe("X-D1-Bookmark on the wire", () => {
  it("a write's bookmark, sent back, is accepted and answered with one at least as recent", async () => {
    const tenant = await createTenant();
    const created = await callJson("/api/integrations/tokens", {
      token: tenant.admin.token,
      body: { name: "bookmark round trip", abilities: ["content:read"] },
    });
    expect(created.res.status).toBe(201);
    const written = created.res.headers.get(BOOKMARK);
    expect(written !== null && isBookmark(written)).toBe(true);

    const listed = await callJson("/api/integrations/tokens", {
      token: tenant.admin.token,
      headers: { [BOOKMARK]: written! },
    });
    expect(listed.res.status).toBe(200);
    // Read-your-writes: the token just created is in the list read from the bookmark.
    expect(listed.body.data.map((t: { id: string }) => t.id)).toContain(created.body.id);
    const read = listed.res.headers.get(BOOKMARK);
    expect(read !== null && isBookmark(read)).toBe(true);
    expect(laterOrEqual(read, written)).toBe(true);
  });

  it("refuses a malformed bookmark with 400 invalid_bookmark, and writes nothing", async () => {
    const tenant = await createTenant();
    for (const bad of [
      "nope",
      "00000000-00000028-00000000",
      "00000000-00000028-00000000-0000000000000000000000000000000G",
    ]) {
      const res = await call("/api/integrations/tokens", {
        token: tenant.admin.token,
        headers: { [BOOKMARK]: bad },
        body: { name: `refused ${bad}`, abilities: ["content:read"] },
      });
      expect(res.status).toBe(400);
      expect(res.headers.get("Content-Type")).toBe("application/problem+json");
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe("invalid_bookmark");
      expect(problem.detail).toContain(BOOKMARK);
      // Nothing read or written: no bookmark to answer but none was valid to echo either.
      expect(res.headers.get(BOOKMARK)).toBeNull();
    }
    const { body } = await callJson("/api/integrations/tokens", { token: tenant.admin.token });
    expect(body.data.filter((t: { name: string }) => t.name.startsWith("refused"))).toEqual([]);
  });

  it("takes an empty header as no bookmark", async () => {
    const tenant = await createTenant();
    const res = await call("/api/integrations/tokens", {
      token: tenant.admin.token,
      headers: { [BOOKMARK]: "" },
    });
    expect(res.status).toBe(200);
    expect(isBookmark(res.headers.get(BOOKMARK) ?? "")).toBe(true);
  });

  it("answers a bookmark on errors too, and exposes it to scripts on the public catalogue", async () => {
    const tenant = await createTenant();
    const missing = await call("/api/courses/no-such-course", { token: tenant.admin.token });
    expect(missing.status).toBe(404);
    expect(isBookmark(missing.headers.get(BOOKMARK) ?? "")).toBe(true);

    const course = await createCourse();
    const page = await call(`/api/public/courses/${course.slug}`, {
      headers: { "CF-Connecting-IP": freshIp() },
    });
    expect(page.status).toBe(200);
    expect(isBookmark(page.headers.get(BOOKMARK) ?? "")).toBe(true);
    expect(page.headers.get("Access-Control-Expose-Headers")).toContain(BOOKMARK);
  });
});

describe("every query in a session", () => {
  it("token routes start at the primary; reads with a client's bookmark start at it", async () => {
    const tenant = await createTenant();
    const spy = sessionsOnly(env.DB);
    const created = await call("/api/integrations/tokens", {
      token: tenant.admin.token,
      body: { name: "in a session", abilities: ["content:read"] },
      env: { DB: spy.db },
    });
    expect(created.status).toBe(201);
    expect(spy.started).toEqual(["first-primary"]);

    const bookmark = created.headers.get(BOOKMARK)!;
    const listed = await call("/api/integrations/tokens", {
      token: tenant.admin.token,
      headers: { [BOOKMARK]: bookmark },
      env: { DB: spy.db },
    });
    expect(listed.status).toBe(200);
    expect(spy.started).toEqual(["first-primary", bookmark]);

    // A write starts at the primary even with a bookmark, and answers a later one.
    const written = await call("/api/integrations/tokens", {
      token: tenant.admin.token,
      headers: { [BOOKMARK]: bookmark },
      body: { name: "written with a bookmark", abilities: ["content:read"] },
      env: { DB: spy.db },
    });
    expect(written.status).toBe(201);
    expect(spy.started).toEqual(["first-primary", bookmark, "first-primary"]);
    expect(laterBookmark(written.headers.get(BOOKMARK), bookmark)).toBe(written.headers.get(BOOKMARK));
  });

  it("echoes the client's bookmark when the request read nothing", async () => {
    const tenant = await createTenant();
    const first = await call("/api/integrations/tokens", { token: tenant.admin.token });
    const bookmark = first.headers.get(BOOKMARK)!;
    // Refused by validation before any query.
    const refused = await call("/api/integrations/tokens", {
      token: tenant.admin.token,
      headers: { [BOOKMARK]: bookmark },
      body: { name: "", abilities: [], unknown_field: true },
    });
    expect(refused.status).toBe(422);
    expect(laterBookmark(refused.headers.get(BOOKMARK), bookmark)).toBe(refused.headers.get(BOOKMARK));
  });

  it("the public catalogue starts at any replica (first-unconstrained)", async () => {
    const course = await createCourse();
    const spy = sessionsOnly(env.DB);
    const res = await call(`/api/public/courses/${course.slug}?fresh=${freshIp()}`, {
      headers: { "CF-Connecting-IP": freshIp(), "Cache-Control": "no-cache" },
      env: { DB: spy.db },
    });
    expect(res.status).toBe(200);
    expect(spy.started).toEqual(["first-unconstrained"]);
  });

  it("the public catalogue keeps a client's bookmark", async () => {
    const course = await createCourse({ slug: `bookmarked-${crypto.randomUUID()}` });
    const first = await call("/api/public/courses?per_page=1", {
      headers: { "CF-Connecting-IP": freshIp() },
    });
    const bookmark = first.headers.get(BOOKMARK)!;
    const spy = sessionsOnly(env.DB);
    const ctx = createExecutionContext();
    const res = await fetchWorker(
      new Request(new URL(`/api/public/courses/${course.slug}`, BASE), {
        headers: { "CF-Connecting-IP": freshIp(), [BOOKMARK]: bookmark },
      }),
      { ...env, DB: spy.db },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    expect(spy.started).toEqual([bookmark]);
  });

  it("a queue batch (the outbox dispatcher) works in one session at the primary", async () => {
    const spy = sessionsOnly(env.DB);
    const execution = createExecutionContext();
    const batch = createMessageBatch("lingua-events", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { event_ids: ["evt_unknown_1"] } },
      { id: "m2", timestamp: new Date(), attempts: 1, body: { event_ids: ["evt_unknown_2"] } },
    ]);
    await consumeQueue(batch, { ...env, DB: spy.db }, execution);
    const result = await getQueueResult(batch, execution);
    expect(result.retryMessages).toEqual([]);
    expect(spy.started).toEqual(["first-primary"]);
  });

  it("a cron run (every sweep) works in one session at the primary", async () => {
    const spy = sessionsOnly(env.DB);
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    try {
      await runSweeps({ ...env, DB: spy.db }, { waitUntil: () => undefined });
    } finally {
      console.error = original;
    }
    expect(errors).toEqual([]);
    expect(spy.started).toEqual(["first-primary"]);
  });
});

describe("the service context's session", () => {
  it("has no bookmark before its first query, then D1's latest, shared with the principal's layer", async () => {
    const ctx = backgroundContext(env, { waitUntil: () => undefined }, "queue");
    expect(sessionBookmark(ctx)).toBeNull();
    await ctx.d1.prepare("SELECT 1").first();
    const first = sessionBookmark(ctx);
    expect(isBookmark(first ?? "")).toBe(true);
    const layered = withPrincipal(ctx, {} as never);
    expect(layered.d1).toBe(ctx.d1);
    expect(layered.db).toBe(ctx.db);
    await layered.db.run("CREATE TABLE IF NOT EXISTS session_probe (x)");
    expect(laterOrEqual(sessionBookmark(ctx), first)).toBe(true);
    expect(sessionBookmark(layered)).toBe(sessionBookmark(ctx));
  });

  it("starts at a given bookmark and echoes it before any query", () => {
    const spy = sessionsOnly(env.DB);
    const bookmark = "00000000-00000001-00000000-00000000000000000000000000000000";
    const ctx = invocationContext({
      env: { ...env, DB: spy.db },
      requestId: "r",
      waitUntil: () => undefined,
      session: bookmark,
    });
    expect(sessionBookmark(ctx)).toBe(bookmark);
    expect(spy.started).toEqual([]);
  });

  it("tolerates stale reads only before its first query", async () => {
    const spy = sessionsOnly(env.DB);
    const early = backgroundContext({ ...env, DB: spy.db }, { waitUntil: () => undefined }, "queue");
    tolerateStaleReads(early);
    await early.d1.prepare("SELECT 1").first();
    const late = backgroundContext({ ...env, DB: spy.db }, { waitUntil: () => undefined }, "queue");
    await late.d1.prepare("SELECT 1").first();
    tolerateStaleReads(late);
    await late.d1.prepare("SELECT 1").first();
    expect(spy.started).toEqual(["first-unconstrained", "first-primary"]);
  });

  it("carries on from a later bookmark another session reached (a Durable Object's write)", async () => {
    const spy = sessionsOnly(env.DB);
    const ctx = backgroundContext({ ...env, DB: spy.db }, { waitUntil: () => undefined }, "queue");
    await ctx.d1.prepare("SELECT 1").first();
    const mine = sessionBookmark(ctx)!;
    // Another session writes: its bookmark is later than this context's.
    const other = env.DB.withSession("first-primary");
    await other.prepare("CREATE TABLE IF NOT EXISTS session_probe_2 (x)").run();
    const theirs = other.getBookmark()!;
    expect(laterBookmark(mine, theirs)).toBe(theirs);

    observeBookmark(ctx, theirs);
    expect(sessionBookmark(ctx)).toBe(theirs);
    // The next query runs in a session started from it; an earlier one changes nothing.
    await ctx.db.run("SELECT 1");
    expect(spy.started).toEqual(["first-primary", theirs]);
    observeBookmark(ctx, mine);
    await ctx.d1.prepare("SELECT 1").first();
    expect(spy.started).toEqual(["first-primary", theirs]);
  });

  it("recording attempts answers the recorder's bookmark (its write in another session)", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1, xp: 10 });
    const before = await callJson("/api/gamification/stats", { token: learner.token });
    const res = await call("/api/progress/attempts", {
      token: learner.token,
      body: {
        id: crypto.randomUUID(),
        training_item_id: course.items[0]!,
        score: 1,
        correct: true,
        duration_seconds: 30,
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
      },
    });
    expect(res.status).toBe(200);
    const after = res.headers.get(BOOKMARK);
    expect(isBookmark(after ?? "")).toBe(true);
    expect(laterBookmark(before.res.headers.get(BOOKMARK), after)).toBe(after);
    // A read from that bookmark sees the attempt.
    const stats = await callJson("/api/gamification/stats", {
      token: learner.token,
      headers: { [BOOKMARK]: after! },
    });
    expect(stats.body).not.toEqual(before.body);
  });
});
