import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { authenticate } from "../../src/platform/auth/middleware";
import { principalContext } from "../../src/platform/http/context-middleware";
import { createApiApp } from "../../src/platform/openapi";
import { advanceClock, clockNow, resetClock } from "../../src/platform/service/clock";
import { backgroundContext, type ServiceContext, withPrincipal } from "../../src/platform/service/context";
import { createTenant } from "../helpers/tenants";

/**
 * An app with the API's conventions (request id, service context) and two probes: what a public
 * handler and a token handler see as their context, and whether the middleware before them saw the
 * same one.
 */
function probeApp() {
  const seen: { before?: ServiceContext; handler?: ServiceContext } = {};
  const app = createApiApp((app) => {
    app.use("/api/probe/*", async (c, next) => {
      seen.before = c.var.ctx;
      await next();
    });
    app.get("/api/probe/public", (c) => {
      seen.handler = c.var.ctx;
      return c.json({ request_id: c.var.ctx.requestId, now: c.var.ctx.now() });
    });
    app.get("/api/probe/token", authenticate, (c) => {
      const ctx = principalContext(c);
      seen.handler = ctx;
      return c.json({ request_id: ctx.requestId, user_id: ctx.principal.user.id, now: ctx.now() });
    });
  });
  return { app, seen };
}

async function request(app: ReturnType<typeof probeApp>["app"], path: string, headers: HeadersInit = {}) {
  const execution = createExecutionContext();
  const res = await app.request(path, { headers }, env, execution);
  await waitOnExecutionContext(execution);
  return res;
}

afterEach(() => resetClock());

describe("the service context of a request", () => {
  it("is built once per request, carries the response's X-Request-Id, and is new for the next request", async () => {
    const { app, seen } = probeApp();
    const first = await request(app, "/api/probe/public");
    const body = await first.json<{ request_id: string }>();
    expect(body.request_id).toBe(first.headers.get("X-Request-Id"));
    expect(seen.handler).toBe(seen.before);
    const firstCtx = seen.handler;

    // A client's well-formed id is the context's id too.
    const second = await request(app, "/api/probe/public", { "X-Request-Id": "trace-0123456789" });
    expect((await second.json<{ request_id: string }>()).request_id).toBe("trace-0123456789");
    expect(second.headers.get("X-Request-Id")).toBe("trace-0123456789");
    expect(seen.handler).not.toBe(firstCtx);
  });

  it("on a token route is the request's context with the principal added, not a second one", async () => {
    const { admin } = await createTenant();
    const { app, seen } = probeApp();
    const res = await request(app, "/api/probe/token", { Authorization: `Bearer ${admin.token}` });
    expect(res.status).toBe(200);
    const body = await res.json<{ request_id: string; user_id: string }>();
    expect(body).toMatchObject({ request_id: res.headers.get("X-Request-Id"), user_id: admin.id });
    // `authenticate` layered the principal over the context the request already had.
    expect(seen.handler).not.toBe(seen.before);
    expect(Object.getPrototypeOf(seen.handler)).toBe(seen.before);
    expect(seen.handler?.db).toBe(seen.before?.db);
  });

  it("reads the injectable clock: now() follows advanceClock", async () => {
    const { app } = probeApp();
    advanceClock(3_600_000);
    const before = Date.now();
    const res = await request(app, "/api/probe/public");
    const { now } = await res.json<{ now: number }>();
    expect(now).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(now).toBeLessThan(Date.now() + 3_600_000 + 1);

    resetClock();
    const again = await (await request(app, "/api/probe/public")).json<{ now: number }>();
    expect(again.now).toBeLessThanOrEqual(Date.now());
  });
});

describe("the service context of a queue or cron invocation", () => {
  it("reads the injectable clock, or the cron's scheduled time when given one", () => {
    const execution = { waitUntil: () => undefined };
    const queueCtx = backgroundContext(env, execution, "queue");
    advanceClock(90_000);
    expect(queueCtx.now() - Date.now()).toBeGreaterThanOrEqual(90_000);
    expect(Math.abs(queueCtx.now() - clockNow())).toBeLessThan(5);

    const scheduled = Date.parse("2026-11-26T10:00:00Z");
    const cronCtx = backgroundContext(env, execution, "cron", () => scheduled);
    expect(cronCtx.now()).toBe(scheduled);
    expect(cronCtx.requestId).toMatch(/^cron_/);
    expect(queueCtx.requestId).toMatch(/^queue_/);
    expect(cronCtx.requestId).not.toBe(backgroundContext(env, execution, "cron").requestId);
  });

  it("hands waitUntil to the invocation's ExecutionContext", async () => {
    const handed: Promise<unknown>[] = [];
    const ctx = backgroundContext(env, { waitUntil: (promise) => void handed.push(promise) }, "queue");
    const work = Promise.resolve("done");
    ctx.waitUntil(work);
    expect(handed).toEqual([work]);
  });

  it("keeps everything of the context when a principal is added", () => {
    const ctx = backgroundContext(env, { waitUntil: () => undefined }, "queue");
    const principal = { user: { id: "usr_x" } } as unknown as Parameters<typeof withPrincipal>[1];
    const withIt = withPrincipal(ctx, principal);
    expect(withIt.principal).toBe(principal);
    expect(withIt.requestId).toBe(ctx.requestId);
    expect(withIt.db).toBe(ctx.db);
    expect(withIt.env).toBe(ctx.env);
    expect("principal" in ctx).toBe(false);
  });
});
