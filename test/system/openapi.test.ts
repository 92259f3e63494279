import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ABILITIES } from "../../src/platform/auth/abilities";
import { ERROR_CATALOGUE } from "../../src/platform/error-catalogue";
import { SUBSCRIBABLE_TYPES } from "../../src/platform/events";
import { call, callJson } from "../helpers/api";
import { freshIp } from "../helpers/tenants";

describe("GET /api/openapi.json", () => {
  it("is a public OpenAPI 3.1 document describing every operation", async () => {
    const { res, body: doc } = await callJson("/api/openapi.json");
    expect(res.status).toBe(200);
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    const operations = Object.entries<any>(doc.paths).flatMap(([path, methods]) =>
      Object.entries<any>(methods).map(([method, op]) => ({ path, method, op })),
    );
    const names = operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(names).toEqual(
      expect.arrayContaining([
        "POST /api/auth/sign-in",
        "GET /api/auth/me",
        "GET /api/integrations/tokens",
        "POST /api/integrations/tokens",
        "DELETE /api/integrations/tokens/{token}",
        "GET /api/openapi.json",
        "GET /healthz",
        "GET /api/integrations/webhooks",
        "POST /api/integrations/webhooks",
        "GET /api/integrations/webhooks/{id}",
        "PUT /api/integrations/webhooks/{id}",
        "DELETE /api/integrations/webhooks/{id}",
        "POST /api/integrations/webhooks/{id}/test",
        "GET /api/integrations/webhooks/{id}/deliveries",
        "POST /api/integrations/webhooks/{id}/deliveries/{delivery}/redeliver",
        "POST /api/integrations/webhooks/{id}/recover",
        "POST /api/integrations/webhooks/{id}/rotate-secret",
        "GET /api/integrations/webhooks/event-types",
        "GET /api/integrations/events",
      ]),
    );
    // What receivers get: one OpenAPI 3.1 webhook per event type, with the signature headers.
    expect(Object.keys(doc.webhooks)).toEqual(
      expect.arrayContaining(["lesson.completed", "ping", "export.completed"]),
    );
    const delivery = doc.webhooks["lesson.completed"].post;
    expect(delivery.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(["X-Signature-256", "webhook-signature", "X-Webhook-Delivery"]),
    );
    const operationIds = operations.map(({ op }) => op.operationId);
    expect(new Set(operationIds).size).toBe(operations.length);
    for (const { path, method, op } of operations) {
      expect(op.summary, `${method} ${path} summary`).toBeTruthy();
      const authenticated = (op.security ?? []).some((s: any) => "bearerAuth" in s);
      if (authenticated) {
        for (const status of ["401", "403", "429", "500"]) {
          expect(op.responses[status], `${method} ${path} ${status}`).toBeDefined();
          expect(Object.keys(op.responses[status].content)).toEqual(["application/problem+json"]);
        }
      }
    }
  });

  it("documents the ability catalogue, the required ability of each operation and every error code", async () => {
    const { body: doc } = await callJson("/api/openapi.json");
    for (const ability of Object.keys(ABILITIES)) expect(doc.info.description).toContain(`\`${ability}\``);
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(doc.info.description).toContain(`\`${code}\``);
    for (const type of SUBSCRIBABLE_TYPES) expect(doc.info.description).toContain(`\`${type}\``);
    expect(doc.paths["/api/integrations/tokens"].post["x-required-ability"]).toBe("tokens:write");
    expect(doc.paths["/api/integrations/tokens"].get["x-required-ability"]).toBe("tokens:read");
    expect(doc.paths["/api/integrations/tokens"].post.parameters.map((p: any) => p.name)).toContain(
      "Idempotency-Key",
    );
    expect(doc.components.schemas.Problem.properties.code.enum).toEqual(Object.keys(ERROR_CATALOGUE));
  });
});

describe("GET /api/docs", () => {
  it("serves the API reference with Scalar from this origin, under a CSP that admits only this origin", async () => {
    const res = await call("/api/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain('data-url="/api/openapi.json"');
    // Every script is a same-origin file; none runs inline, so the CSP needs no hash, nonce or 'unsafe-inline'.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => m[2]!.trim())).toEqual(["", ""]);
    expect(scripts.map((m) => /\bsrc="([^"]+)"/.exec(m[1]!)?.[1])).toEqual([
      undefined,
      "/api/docs/scalar-api-reference.js",
    ]);
    expect(html).not.toMatch(/https?:\/\//);
    const csp = res.headers.get("Content-Security-Policy")!;
    const directives = Object.fromEntries(
      csp.split(";").map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name!, values.join(" ")];
      }),
    );
    expect(directives).toMatchObject({
      "default-src": "'none'",
      "script-src": "'self'",
      "connect-src": "'self'",
      "frame-ancestors": "'none'",
      "base-uri": "'none'",
    });
    // No directive names another origin.
    expect(csp).not.toMatch(/https?:|\*/);
  });
});

describe("routing", () => {
  it("keeps every route group's Hono on its RegExpRouter but webhooks, institutions and lti, whose static event-types, members/bulk and lti-consumers/registration-links need the TrieRouter", async () => {
    const { ROUTE_GROUPS, appForGroup } = await import("../../src/app");
    for (const group of ROUTE_GROUPS) {
      const app = await appForGroup(group);
      await app.request(group.prefixes[0]!); // SmartRouter picks its router at the first request
      // `/webhooks/event-types` beside `/webhooks/{id}`: the RegExpRouter cannot hold a static segment
      // beside a parameter, the TrieRouter answers the first registered match (under 1 µs a request).
      const expected = ["webhooks", "institutions", "lti"].includes(group.name)
        ? "TrieRouter"
        : "RegExpRouter";
      expect([
        group.name,
        (app.router as unknown as { activeRouter: { name: string } }).activeRouter.name,
      ]).toEqual([group.name, expected]);
    }
  });

  it("holds every route to its group's prefixes, and no two groups claim the same path", async () => {
    const { ROUTE_GROUPS, appForGroup, groupForPath } = await import("../../src/app");
    const claims = ROUTE_GROUPS.flatMap((g) => g.prefixes.map((prefix) => ({ group: g.name, prefix })));
    for (const a of claims) {
      for (const b of claims) {
        if (a.group === b.group) continue;
        const overlap = a.prefix === b.prefix || a.prefix.startsWith(`${b.prefix}/`);
        expect({ a, b, overlap }).toEqual({ a, b, overlap: false });
      }
    }
    let routes = 0;
    for (const group of ROUTE_GROUPS) {
      const app = await appForGroup(group);
      for (const route of app.routes) {
        if (route.path.includes("*")) continue; // the group's own middleware
        // A sample path for the route: each parameter filled in.
        const sample = route.path.replace(/:[A-Za-z_][A-Za-z0-9_]*/g, "x");
        expect([route.method, route.path, groupForPath(sample).name]).toEqual([
          route.method,
          route.path,
          group.name,
        ]);
        routes++;
      }
    }
    expect(routes).toBeGreaterThanOrEqual(45);
    expect(groupForPath("/api/nothing-here").name).toBe("unrouted");
    expect(groupForPath("/api/coursesx").name).toBe("unrouted");
  });

  it("takes each group's prefixes from its domains' prefixes.ts, modules without imports", async () => {
    const sources = import.meta.glob<string>("/src/domains/*/prefixes.ts", {
      query: "?raw",
      import: "default",
      eager: true,
    });
    // Loading a group's prefixes must load nothing else: app.ts reads them all at start.
    expect(Object.keys(sources).length).toBeGreaterThanOrEqual(11);
    for (const [file, source] of Object.entries(sources)) {
      expect([file, /^\s*import\b/m.test(source)]).toEqual([file, false]);
    }
    const { ROUTE_GROUPS } = await import("../../src/app");
    const modules = import.meta.glob<{ PREFIXES: readonly string[] }>("/src/domains/*/prefixes.ts", {
      eager: true,
    });
    const declared = Object.values(modules).flatMap((m) => [...m.PREFIXES]);
    expect(ROUTE_GROUPS.flatMap((g) => g.prefixes).sort()).toEqual(declared.sort());
  });

  it("builds a group's app once, for concurrent first requests too, and retries a failed import", async () => {
    const { appForGroup } = await import("../../src/app");
    const { createApiApp } = await import("../../src/platform/openapi");
    let loads = 0;
    let fail = true;
    const group = {
      name: "test-only",
      prefixes: ["/test-only"],
      build: async () => {
        loads++;
        if (fail) throw new Error("import failed");
        return createApiApp((app) => app.get("/test-only", (c) => c.text("here")));
      },
    };
    await expect(Promise.resolve(appForGroup(group))).rejects.toThrow("import failed");
    fail = false;
    const apps = await Promise.all([appForGroup(group), appForGroup(group), appForGroup(group)]);
    expect(loads).toBe(2);
    expect(new Set(apps).size).toBe(1);
    expect(appForGroup(group)).toBe(apps[0]); // later requests get the built app without waiting
    // With this file's bindings: every request's conventions build its service context from them.
    const res = await apps[0]!.request("/test-only", {}, env);
    expect(await res.text()).toBe("here");
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });

  it("answers the event catalogue from its own route, and a webhook id from the parameterised one", async () => {
    const { createTenant } = await import("../helpers/tenants");
    const { admin } = await createTenant();
    const page = await callJson("/api/integrations/webhooks/event-types?per_page=2&page=2", {
      token: admin.token,
    });
    expect(page.res.status).toBe(200);
    expect(page.body.data).toHaveLength(2);
    expect(page.body.meta).toMatchObject({ per_page: 2, current_page: 2 });
    const bad = await callJson("/api/integrations/webhooks/event-types?per_page=0", { token: admin.token });
    expect(bad.res.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ path: "per_page" })]);
    // The catalogue's paging parameters are not the webhook's: GET /webhooks/{id} takes none.
    const hook = await callJson("/api/integrations/webhooks/wh_missing?per_page=2", { token: admin.token });
    expect(hook.res.status).toBe(422);
    expect(hook.body.errors).toEqual([expect.objectContaining({ path: "per_page" })]);
    const missing = await callJson("/api/integrations/webhooks/wh_missing", { token: admin.token });
    expect(missing.res.status).toBe(404);
    // Other methods on the static path still reach the parameterised routes: no webhook has that id.
    const deleted = await callJson("/api/integrations/webhooks/event-types", {
      token: admin.token,
      method: "DELETE",
    });
    expect(deleted.res.status).toBe(404);
  });
});

describe("the API description's own limits", () => {
  it("limits the document and the reference page per client IP, like the public catalogue, but never /healthz", async () => {
    // vitest.config.ts gives PUBLIC_RATE_LIMITER 30 requests per 60 s (wrangler.toml: 600).
    const ip = freshIp();
    let refused: Response | undefined;
    for (let i = 0; i < 61 && !refused; i++) {
      const res = await call(i % 2 ? "/api/docs" : "/api/openapi.json", {
        headers: { "CF-Connecting-IP": ip },
      });
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(refused).toBeDefined();
    expect(refused!.headers.get("Retry-After")).toBe("60");
    expect(refused!.headers.get("Content-Type")).toBe("application/problem+json");
    for (let i = 0; i < 5; i++)
      expect((await call("/healthz", { headers: { "CF-Connecting-IP": ip } })).status).toBe(200);
  });

  it("declares Retry-After on every 429 and the rate-limit headers beside it on authenticated operations", async () => {
    const { body: doc } = await callJson("/api/openapi.json", { headers: { "CF-Connecting-IP": freshIp() } });
    const operations = Object.values<any>(doc.paths).flatMap((methods) => Object.values<any>(methods));
    for (const op of operations) {
      if (op.operationId === "healthz") expect(op.responses["429"]).toBeUndefined();
      else expect(op.responses["429"]?.headers?.["Retry-After"], op.operationId).toBeDefined();
    }
    const me = doc.paths["/api/auth/me"].get;
    expect(Object.keys(me.responses["429"].headers)).toEqual(
      expect.arrayContaining(["Retry-After", "X-RateLimit-Remaining", "RateLimit"]),
    );
    // Sign-in counts each address exactly and says so in every response; the catalogue's edge limit sends no such headers.
    const signIn = doc.paths["/api/auth/sign-in"].post;
    for (const status of ["200", "401", "429"])
      expect(Object.keys(signIn.responses[status].headers ?? {}), status).toEqual(
        expect.arrayContaining(["X-RateLimit-Remaining", "RateLimit-Policy"]),
      );
    expect(
      doc.paths["/api/public/courses"].get.responses["200"].headers?.["X-RateLimit-Remaining"],
    ).toBeUndefined();
  });

  it("declares Idempotent-Replayed on the success response of every operation that takes an Idempotency-Key", async () => {
    const { body: doc } = await callJson("/api/openapi.json", { headers: { "CF-Connecting-IP": freshIp() } });
    const operations = Object.values<any>(doc.paths).flatMap((methods) => Object.values<any>(methods));
    const keyed = operations.filter((op) =>
      (op.parameters ?? []).some((p: any) => p.in === "header" && p.name === "Idempotency-Key"),
    );
    expect(keyed.map((op) => op.operationId)).toEqual(
      expect.arrayContaining(["createExport", "createToken", "createWebhook", "recordAttempts"]),
    );
    for (const op of keyed) {
      const success = Object.entries<any>(op.responses).filter(([status]) => status.startsWith("2"));
      expect(success.length, op.operationId).toBeGreaterThan(0);
      for (const [status, response] of success)
        expect(response.headers?.["Idempotent-Replayed"], `${op.operationId} ${status}`).toBeDefined();
    }
  });
});
