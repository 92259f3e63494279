import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhooks } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createPlatformAdmin, createTenant, mintToken } from "../helpers/tenants";
import { createWebhook } from "./support";

const HOOK = "https://hooks.example.com/lingua";

describe("webhook resource", () => {
  it("create shows the secret once; get, list and update never do", async () => {
    const { admin } = await createTenant();
    const { res, body } = await callJson("/api/integrations/webhooks", {
      token: admin.token,
      body: {
        url: HOOK,
        events: ["lesson.completed", "course.completed", "lesson.completed"],
        description: "LMS sync",
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("Location")).toBe(`https://api.lingua.test/api/integrations/webhooks/${body.id}`);
    expect(body).toMatchObject({
      url: HOOK,
      events: ["lesson.completed", "course.completed"],
      description: "LMS sync",
      enabled: true,
      disabled_reason: null,
      consecutive_failures: 0,
    });
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(atob(body.secret.slice(6)).length).toBeGreaterThanOrEqual(32);

    const got = await callJson(`/api/integrations/webhooks/${body.id}`, { token: admin.token });
    expect(got.res.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect(got.body.health).toEqual({
      window_hours: 24,
      succeeded: 0,
      failed: 0,
      pending: 0,
      success_rate: null,
      last_delivery_at: null,
      last_success_at: null,
      last_failure_at: null,
    });
    const list = await callJson("/api/integrations/webhooks", { token: admin.token });
    expect(list.body.data.map((w: any) => w.id)).toEqual([body.id]);
    expect(JSON.stringify(list.body)).not.toContain(body.secret.slice(6, 20));

    const put = await callJson(`/api/integrations/webhooks/${body.id}`, {
      token: admin.token,
      method: "PUT",
      body: { events: ["*"], description: null },
    });
    expect(put.res.status).toBe(200);
    expect(put.body).toMatchObject({ url: HOOK, events: ["*"], description: null, enabled: true });
    expect(put.body.secret).toBeUndefined();
  });

  it("stores the secret encrypted: the column holds neither the secret nor its base64 part", async () => {
    const { admin } = await createTenant();
    const hook = await createWebhook(admin, { url: HOOK, events: ["*"] });
    const row = await database(env.DB).select().from(webhooks).where(eq(webhooks.id, hook.id)).get();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(hook.secret);
    expect(stored).not.toContain(hook.secret.slice(6));
    expect(row!.secretSealed).toMatch(/^v2\./);
  });

  it("disabling and re-enabling by PUT is visible in the resource", async () => {
    const { admin } = await createTenant();
    const hook = await createWebhook(admin, { url: HOOK, events: ["*"] });
    const off = await callJson(`/api/integrations/webhooks/${hook.id}`, {
      token: admin.token,
      method: "PUT",
      body: { enabled: false },
    });
    expect(off.body).toMatchObject({ enabled: false, disabled_reason: "manual" });
    expect(off.body.disabled_at).toEqual(expect.any(String));
    const on = await callJson(`/api/integrations/webhooks/${hook.id}`, {
      token: admin.token,
      method: "PUT",
      body: { enabled: true },
    });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
  });

  it("delete removes the webhook and its log; a second delete is 404", async () => {
    const { admin } = await createTenant();
    const hook = await createWebhook(admin, { url: HOOK, events: ["*"] });
    const del = await callJson(`/api/integrations/webhooks/${hook.id}`, {
      token: admin.token,
      method: "DELETE",
    });
    expect(del.res.status).toBe(204);
    expect((await callJson(`/api/integrations/webhooks/${hook.id}`, { token: admin.token })).res.status).toBe(
      404,
    );
    expect(
      (await callJson(`/api/integrations/webhooks/${hook.id}`, { token: admin.token, method: "DELETE" })).res
        .status,
    ).toBe(404);
  });

  it("validates events and fields, changing nothing on a 422", async () => {
    const { admin } = await createTenant();
    const cases: [unknown, string][] = [
      [{ url: HOOK, events: [] }, "events"],
      [{ url: HOOK, events: ["lesson.finished"] }, "events.0"],
      [{ url: HOOK, events: ["ping"] }, "events.0"],
      [{ url: HOOK }, "events"],
      [{ events: ["*"] }, "url"],
      [{ url: HOOK, events: ["*"], colour: "red" }, "colour"],
      [{ url: HOOK, events: ["*"], description: "x".repeat(501) }, "description"],
    ];
    for (const [body, path] of cases) {
      const { res, body: problem } = await callJson("/api/integrations/webhooks", {
        token: admin.token,
        body,
      });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(problem.code).toBe("validation_failed");
      expect(
        problem.errors.map((e: any) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    const empty = await callJson(
      `/api/integrations/webhooks/${(await createWebhook(admin, { url: HOOK, events: ["*"] })).id}`,
      { token: admin.token, method: "PUT", body: {} },
    );
    expect(empty.res.status).toBe(422);
    const list = await callJson("/api/integrations/webhooks", { token: admin.token });
    expect(list.body.meta.total).toBe(1);
  });

  it("allows at most 20 webhooks per institution, even when created concurrently", async () => {
    const { admin } = await createTenant();
    const results = await Promise.all(
      Array.from({ length: 24 }, () =>
        callJson("/api/integrations/webhooks", { token: admin.token, body: { url: HOOK, events: ["*"] } }),
      ),
    );
    expect(results.filter((r) => r.res.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.res.status !== 201);
    expect(refused.map((r) => r.body.code)).toEqual(["conflict", "conflict", "conflict", "conflict"]);
    expect(
      (await callJson("/api/integrations/webhooks?per_page=100", { token: admin.token })).body.meta.total,
    ).toBe(20);
  });

  it("replays a creation with the same Idempotency-Key, secret included, and creates one webhook", async () => {
    const { admin } = await createTenant();
    const send = () =>
      callJson("/api/integrations/webhooks", {
        token: admin.token,
        body: { url: HOOK, events: ["*"] },
        headers: { "Idempotency-Key": "hook-1" },
      });
    const first = await send();
    const second = await send();
    expect(first.res.status).toBe(201);
    expect(second.res.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect((await callJson("/api/integrations/webhooks", { token: admin.token })).body.meta.total).toBe(1);
  });
});

describe("target URL rules", () => {
  const production = { ALLOW_LOOPBACK_TARGETS: "false" } as const;
  const refused = [
    "http://hooks.example.com/x",
    "https://user:pass@hooks.example.com/x",
    "https://localhost/x",
    "https://api.localhost/x",
    "https://127.0.0.1/x",
    "https://2130706433/x",
    "https://10.1.2.3/x",
    "https://172.16.0.1/x",
    "https://192.168.1.10/x",
    "https://169.254.169.254/latest/meta-data",
    "https://100.64.0.1/x",
    "https://0.0.0.0/x",
    "https://[::1]/x",
    "https://[fe80::1]/x",
    "https://[fd00:ec2::254]/x",
    "https://[::ffff:10.0.0.1]/x",
    "https://[2002:a00:1::1]/x",
    "https://[fec0::1]/x",
    "https://localhost../x",
    "https://metadata.google.internal/x",
    "ftp://hooks.example.com/x",
    "hooks.example.com/x",
  ];

  it.each(refused)("refuses %s in production", async (url) => {
    const { admin } = await createTenant();
    const { res, body } = await callJson("/api/integrations/webhooks", {
      token: admin.token,
      body: { url, events: ["*"] },
      env: production,
    });
    expect(res.status).toBe(422);
    expect(body.errors[0].path).toBe("url");
  });

  it("accepts public https URLs in production, and refuses a private one on update too", async () => {
    const { admin } = await createTenant();
    for (const url of [
      "https://hooks.example.com/lingua?source=lingua",
      "https://8.8.8.8/hook",
      "https://[2606:4700::1111]/hook",
    ]) {
      const { res } = await callJson("/api/integrations/webhooks", {
        token: admin.token,
        // Disabled: nothing is ever sent to a non-loopback address.
        body: { url, events: ["*"], enabled: false },
        env: production,
      });
      expect(res.status, url).toBe(201);
    }
    const hook = await createWebhook(admin, { url: HOOK, events: ["*"] });
    const put = await callJson(`/api/integrations/webhooks/${hook.id}`, {
      token: admin.token,
      method: "PUT",
      body: { url: "https://10.0.0.1/x" },
      env: production,
    });
    expect(put.res.status).toBe(422);
    expect((await callJson(`/api/integrations/webhooks/${hook.id}`, { token: admin.token })).body.url).toBe(
      HOOK,
    );
  });

  it("accepts http and loopback when ALLOW_LOOPBACK_TARGETS is true (local development)", async () => {
    const { admin } = await createTenant();
    for (const url of [
      "http://127.0.0.1:9999/hook",
      "http://localhost:9999/hook",
      "http://[::1]:9999/hook",
    ]) {
      const { res } = await callJson("/api/integrations/webhooks", {
        token: admin.token,
        body: { url, events: ["*"], enabled: false },
        env: { ALLOW_LOOPBACK_TARGETS: "true" },
      });
      expect(res.status, url).toBe(201);
    }
  });

  it.each([
    "https://10.1.2.3/x",
    "https://192.168.1.10/x",
    "https://169.254.169.254/latest/meta-data",
    "https://100.64.0.1/x",
    "https://[fd00:ec2::254]/x",
    "http://hooks.example.com/x",
  ])("refuses %s in development too: loopback is all it reaches", async (url) => {
    const { admin } = await createTenant();
    const { res, body } = await callJson("/api/integrations/webhooks", {
      token: admin.token,
      body: { url, events: ["*"] },
      env: { ALLOW_LOOPBACK_TARGETS: "true" },
    });
    expect(res.status).toBe(422);
    expect(body.errors[0].path).toBe("url");
  });
});

describe("access", () => {
  it("another institution's webhook is 404 on every operation", async () => {
    const mine = await createTenant();
    const theirs = await createTenant();
    const hook = await createWebhook(theirs.admin, { url: HOOK, events: ["*"] });
    const probes: [string, string, unknown?][] = [
      ["GET", `/api/integrations/webhooks/${hook.id}`],
      ["PUT", `/api/integrations/webhooks/${hook.id}`, { enabled: false }],
      ["DELETE", `/api/integrations/webhooks/${hook.id}`],
      ["POST", `/api/integrations/webhooks/${hook.id}/test`],
      ["POST", `/api/integrations/webhooks/${hook.id}/rotate-secret`, {}],
      ["GET", `/api/integrations/webhooks/${hook.id}/deliveries`],
      [
        "POST",
        `/api/integrations/webhooks/${hook.id}/recover`,
        { since: new Date(Date.now() - 3_600_000).toISOString() },
      ],
    ];
    for (const [method, path, body] of probes) {
      const { res, body: problem } = await callJson(path, { token: mine.admin.token, method, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(problem.code).toBe("not_found");
    }
    expect((await callJson("/api/integrations/webhooks", { token: mine.admin.token })).body.data).toEqual([]);
    const still = await callJson(`/api/integrations/webhooks/${hook.id}`, { token: theirs.admin.token });
    expect(still.body).toMatchObject({ enabled: true });
  });

  it("needs webhooks abilities: learners and read-only tokens are refused", async () => {
    const { admin, learner } = await createTenant();
    expect((await callJson("/api/integrations/webhooks", { token: learner.token })).res.status).toBe(403);
    const readOnly = await mintToken(admin, ["webhooks:read"]);
    expect((await callJson("/api/integrations/webhooks", { token: readOnly.token })).res.status).toBe(200);
    const write = await callJson("/api/integrations/webhooks", {
      token: readOnly.token,
      body: { url: HOOK, events: ["*"] },
    });
    expect(write.res.status).toBe(403);
    expect(write.body.code).toBe("missing_ability");
  });

  it("a platform admin, who belongs to no institution, is told so", async () => {
    const staff = await createPlatformAdmin();
    const { res, body } = await callJson("/api/integrations/webhooks", { token: staff.token });
    expect(res.status).toBe(403);
    expect(body.detail).toMatch(/institution/);
  });
});

describe("event catalogue", () => {
  it("lists every type with a description and an example delivery body", async () => {
    const { admin } = await createTenant();
    const { res, body } = await callJson("/api/integrations/webhooks/event-types", { token: admin.token });
    expect(res.status).toBe(200);
    const types = body.data.map((t: any) => t.type);
    for (const t of [
      "ping",
      "lesson.completed",
      "course.completed",
      "achievement.unlocked",
      "cefr.level_changed",
      "member.created",
      "member.updated",
      "member.removed",
      "export.completed",
      "export.failed",
      "subscription.updated",
      "trial.will_end",
      "invoice.payment_failed",
    ]) {
      expect(types).toContain(t);
    }
    for (const t of body.data) {
      expect(t.description.length).toBeGreaterThan(10);
      expect(t.example).toMatchObject({
        id: expect.stringMatching(/^evt_/),
        type: t.type,
        created_at: expect.any(String),
        data: expect.any(Object),
      });
    }
    expect(body.data.find((t: any) => t.type === "ping").subscribable).toBe(false);
  });
});

it("the loopback receiver is reachable from tests", async () => {
  const receiver = receiverEndpoint();
  await receiver.configure({});
  expect(await receiver.received()).toEqual([]);
});
