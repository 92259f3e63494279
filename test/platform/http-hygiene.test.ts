import { createExecutionContext, env } from "cloudflare:test";
import { and, count, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiTokens } from "../../src/db/schema";
import worker from "../../src/index";
import { database } from "../../src/platform/db";
import { createApiApp } from "../../src/platform/openapi";
import { BASE, call, callJson } from "../helpers/api";
import { createTenant, freshIp } from "../helpers/tenants";

/** How many API tokens (not sessions) the user has. */
async function apiTokensOf(userId: string): Promise<number> {
  const [row] = await database(env.DB)
    .select({ n: count() })
    .from(apiTokens)
    .where(and(eq(apiTokens.kind, "api"), eq(apiTokens.userId, userId)));
  return row?.n ?? 0;
}

function expectProblem(res: Response, body: any, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/problem+json");
  expect(body).toMatchObject({ status, code, type: `${BASE}/api/docs/errors#${code}` });
  expect(typeof body.title).toBe("string");
  expect(typeof body.detail).toBe("string");
  expect(body.request_id).toBe(res.headers.get("X-Request-Id"));
}

describe("errors are problem+json", () => {
  it("answers an unknown route with 404", async () => {
    const { res, body } = await callJson("/api/nothing-here");
    expectProblem(res, body, 404, "not_found");
    const outside = await callJson("/favicon.ico");
    expectProblem(outside.res, outside.body, 404, "not_found");
  });

  it("answers a wrong method on a real path with 405 and Allow", async () => {
    const { res, body } = await callJson("/api/integrations/tokens", { method: "PATCH" });
    expectProblem(res, body, 405, "method_not_allowed");
    expect(res.headers.get("Allow")).toBe("GET, HEAD, POST");
    const withId = await callJson("/api/integrations/tokens/tok_1", { method: "GET" });
    expectProblem(withId.res, withId.body, 405, "method_not_allowed");
    expect(withId.res.headers.get("Allow")).toBe("DELETE");
  });

  it("answers a path with a trailing slash as the unknown path it is, not with 405", async () => {
    const { res, body } = await callJson("/api/integrations/tokens/");
    expectProblem(res, body, 404, "not_found");
    expect(res.headers.get("Allow")).toBeNull();
  });

  it("answers malformed JSON with 400", async () => {
    const { res, body } = await callJson("/api/auth/sign-in", {
      rawBody: '{"email": "a@b.c",',
      headers: { "Content-Type": "application/json" },
    });
    expectProblem(res, body, 400, "malformed_json");
  });

  it("answers a body that is not JSON with 415", async () => {
    const { res, body } = await callJson("/api/auth/sign-in", {
      rawBody: "email=a@b.c&password=x",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expectProblem(res, body, 415, "unsupported_media_type");
    const { admin } = await createTenant();
    const authed = await callJson("/api/integrations/tokens", {
      token: admin.token,
      rawBody: "name=x",
      headers: { "Content-Type": "text/plain" },
    });
    expectProblem(authed.res, authed.body, 415, "unsupported_media_type");
  });

  it("answers a body over 1 MiB with 413 and creates nothing", async () => {
    const { admin } = await createTenant();
    const huge = JSON.stringify({ name: "x".repeat(1024 * 1024), abilities: ["content:read"] });
    const { res, body } = await callJson("/api/integrations/tokens", {
      token: admin.token,
      rawBody: huge,
      headers: { "Content-Type": "application/json" },
    });
    expectProblem(res, body, 413, "payload_too_large");
    expect(await apiTokensOf(admin.id)).toBe(0);
  });

  it("lets a route declare a larger body (the bulk upload's 5 MiB), still checked before authentication", async () => {
    const bulk = "/api/institutions/inst_unknown/members/bulk";
    const csv = (bytes: number) => ({ rawBody: "x".repeat(bytes), headers: { "Content-Type": "text/csv" } });
    // Over 1 MiB but within the route's own 5 MiB: past the limit, so authentication answers.
    const within = await callJson(bulk, { method: "POST", ...csv(2 * 1024 * 1024) });
    expectProblem(within.res, within.body, 401, "unauthenticated");
    // Over 5 MiB: refused before authentication, as every body limit is.
    const over = await callJson(bulk, { method: "POST", ...csv(5 * 1024 * 1024 + 1) });
    expectProblem(over.res, over.body, 413, "payload_too_large");
    // The path's limit, whatever the method: a wrong method with such a body is still a 405.
    const wrongMethod = await callJson(bulk, { method: "PUT", ...csv(2 * 1024 * 1024) });
    expectProblem(wrongMethod.res, wrongMethod.body, 405, "method_not_allowed");
    // Every other path keeps 1 MiB, before authentication too.
    const other = await callJson("/api/integrations/tokens", {
      method: "POST",
      rawBody: "x".repeat(2 * 1024 * 1024),
      headers: { "Content-Type": "application/json" },
    });
    expectProblem(other.res, other.body, 413, "payload_too_large");
  });

  it("answers a chunked body over 1 MiB, sent without Content-Length, with 413 and creates nothing", async () => {
    const { admin } = await createTenant();
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0)
          controller.enqueue(new TextEncoder().encode('{"abilities":["content:read"],"name":"'));
        if (sent >= 20) {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += 1;
      },
    });
    const { res, body } = await callJson("/api/integrations/tokens", {
      token: admin.token,
      rawBody: stream,
      headers: { "Content-Type": "application/json" },
    });
    expectProblem(res, body, 413, "payload_too_large");
    expect(await apiTokensOf(admin.id)).toBe(0);
  });

  it("answers an exception thrown before any app runs with a 500 problem that still carries the request id and headers", async () => {
    // The worker's first look at a request (is it a GET the isolate answered a moment ago?) throws.
    const request = new Request("https://api.lingua.test/api/public/courses");
    const failing = new Proxy(request, {
      get(target, name) {
        if (name === "method") throw new Error("SELECT secret FROM vault -- password=hunter2");
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const res = await worker.fetch(failing, env, createExecutionContext());
    const body = await res.json<any>();
    expectProblem(res, body, 500, "internal_error");
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(JSON.stringify(body)).not.toMatch(/hunter2|SELECT|vault/);
  });

  it("answers an uncaught exception with a 500 that leaks nothing", async () => {
    const app = createApiApp((routes) => {
      routes.get("/boom", () => {
        throw new Error("SELECT secret FROM vault -- password=hunter2");
      });
    });
    const res = await app.request(`${BASE}/boom`, {}, env, createExecutionContext());
    const body = await res.json<any>();
    expectProblem(res, body, 500, "internal_error");
    expect(JSON.stringify(body)).not.toMatch(/hunter2|SELECT|vault|at \//);
  });

  it("refuses query parameters an authenticated operation does not know, naming each, instead of ignoring them", async () => {
    const { admin } = await createTenant();
    const cases: [string, string[]][] = [
      ["/api/lessons?course_id=crs_1", ["course_id"]],
      ["/api/trainingItems?lesson=les_1&type=grammar", ["lesson"]],
      ["/api/gamification/stats?userid=usr_1", ["userid"]],
      ["/api/integrations/tokens?page=1&sort=name&order=asc", ["order", "sort"]],
      // An operation that declares no query parameters takes none.
      ["/api/auth/me?verbose=1", ["verbose"]],
      ["/api/auth/me?verbose=1&verbose=2&debug", ["debug", "verbose"]],
      // One handler answers these two operations; each checks its own parameters.
      ["/api/integrations/webhooks/whk_nope?verbose=1", ["verbose"]],
      ["/api/integrations/webhooks/event-types?per_page=2&verbose=1", ["verbose"]],
    ];
    for (const [path, unknown] of cases) {
      const { res, body } = await callJson(path, { token: admin.token });
      expectProblem(res, body, 422, "validation_failed");
      expect(body.errors.map((e: any) => e.path).sort(), path).toEqual(unknown);
    }
    // A write that takes no query refuses one too, and revokes nothing.
    const revoke = await callJson(`/api/integrations/tokens/${admin.tokenId}?force=true`, {
      method: "DELETE",
      token: admin.token,
    });
    expectProblem(revoke.res, revoke.body, 422, "validation_failed");
    expect(revoke.body.errors).toEqual([{ path: "force", message: "is not a recognised field" }]);
    expect((await call("/api/auth/me", { token: admin.token })).status).toBe(200);
    // An empty query is no parameter at all.
    const bare = await call("/api/auth/me?", { token: admin.token });
    expect(bare.status).toBe(200);
    await bare.arrayBuffer();
    // Public operations ignore them (campaign tags must not break links or split the cache).
    const open = await call("/api/public/courses?utm_source=newsletter", {
      headers: { "CF-Connecting-IP": freshIp() },
    });
    expect(open.status).toBe(200);
    await open.arrayBuffer();
  });

  it("lists every failing parameter of a list request", async () => {
    const { admin } = await createTenant();
    const { res, body } = await callJson("/api/integrations/tokens?page=0&per_page=500&kind=robot", {
      token: admin.token,
    });
    expectProblem(res, body, 422, "validation_failed");
    expect(body.errors.map((e: any) => e.path).sort()).toEqual(["kind", "page", "per_page"]);
    expect(body.errors.find((e: any) => e.path === "per_page").message).toBe("must be <= 100");
  });
});

describe("response headers", () => {
  it("sends nosniff and a request id on every response, errors included", async () => {
    for (const path of ["/healthz", "/api/openapi.json", "/api/nothing-here", "/api/auth/me"]) {
      const res = await call(path);
      expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(res.headers.get("X-Request-Id")).toMatch(/^req_[0-9a-f]{32}$/);
      await res.arrayBuffer();
    }
  });

  it("keeps a well-formed client request id for tracing", async () => {
    const res = await call("/healthz", { headers: { "X-Request-Id": "client-trace-123456" } });
    expect(res.headers.get("X-Request-Id")).toBe("client-trace-123456");
    const spoofed = await call("/healthz", { headers: { "X-Request-Id": "<script>" } });
    expect(spoofed.headers.get("X-Request-Id")).toMatch(/^req_/);
  });

  it("marks authenticated responses no-store and opens CORS only on public endpoints", async () => {
    const { admin } = await createTenant();
    const authed = await call("/api/integrations/tokens", {
      token: admin.token,
      headers: { Origin: "https://evil.example" },
    });
    expect(authed.headers.get("Cache-Control")).toBe("no-store");
    // Refusals too, although the route never ran.
    for (const token of [undefined, `lng_${"A".repeat(43)}`]) {
      const refused = await call("/api/integrations/tokens", { token });
      expect(refused.status).toBe(401);
      expect(refused.headers.get("Cache-Control")).toBe("no-store");
      await refused.arrayBuffer();
    }
    expect(authed.headers.get("Access-Control-Allow-Origin")).toBeNull();
    const preflight = await call("/api/integrations/tokens", {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "GET" },
    });
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBeNull();
    const open = await call("/api/openapi.json", { headers: { Origin: "https://docs.example" } });
    expect(open.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });

  it("serves /healthz without a token or database", async () => {
    const { res, body } = await callJson("/healthz");
    expect(res.status).toBe(200);
    expect(body).toEqual({ status: "ok" });
  });
});
