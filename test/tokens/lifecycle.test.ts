import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { apiTokens, idempotencyKeys } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { advanceClock, resetClock } from "../../src/platform/service/clock";
import { call, callJson } from "../helpers/api";
import { createTenant, mintToken } from "../helpers/tenants";

afterEach(() => resetClock());

const db = () => database(env.DB);

/** The token's `last_used_at` as stored. */
async function lastUsedAt(id: string): Promise<string | null | undefined> {
  const row = await db()
    .select({ lastUsedAt: apiTokens.lastUsedAt })
    .from(apiTokens)
    .where(eq(apiTokens.id, id))
    .get();
  return row?.lastUsedAt;
}

describe("API token life cycle", () => {
  it("shows the plain value once, lists the token without it, and revokes it at once", async () => {
    const { admin } = await createTenant();
    const created = await callJson("/api/integrations/tokens", {
      token: admin.token,
      body: { name: "HR sync", abilities: ["content:read", "progress:read"] },
    });
    expect(created.res.status).toBe(201);
    expect(created.res.headers.get("Location")).toMatch(
      new RegExp(`/api/integrations/tokens/${created.body.id}$`),
    );
    const plain: string = created.body.token;
    expect(plain).toMatch(/^lng_[A-Za-z0-9_-]{43}$/);
    expect(created.body).toMatchObject({
      name: "HR sync",
      kind: "api",
      abilities: ["content:read", "progress:read"],
      expires_at: null,
      last_used_at: null,
    });
    expect(plain.startsWith(created.body.prefix)).toBe(true);
    expect(created.body.prefix.length).toBeLessThan(12);

    const stored = await db().select().from(apiTokens).where(eq(apiTokens.id, created.body.id)).get();
    expect(stored).toBeDefined();
    expect(JSON.stringify(stored)).not.toContain(plain);

    const list = await callJson("/api/integrations/tokens", { token: admin.token });
    expect(list.res.status).toBe(200);
    const listed = list.body.data.find((t: any) => t.id === created.body.id);
    expect(listed).toMatchObject({ name: "HR sync", prefix: created.body.prefix });
    expect(listed).not.toHaveProperty("token");
    expect(JSON.stringify(list.body)).not.toContain(plain);

    const me = await callJson("/api/auth/me", { token: plain });
    expect(me.res.status).toBe(200);
    expect(me.body.token).toMatchObject({
      id: created.body.id,
      kind: "api",
      abilities: ["content:read", "progress:read"],
    });

    const revoked = await call(`/api/integrations/tokens/${created.body.id}`, {
      method: "DELETE",
      token: admin.token,
    });
    expect(revoked.status).toBe(204);
    const after = await callJson("/api/auth/me", { token: plain });
    expect(after.res.status).toBe(401);
    expect(after.body.detail).toMatch(/revoked/);

    const again = await call(`/api/integrations/tokens/${created.body.id}`, {
      method: "DELETE",
      token: admin.token,
    });
    expect(again.status).toBe(404);
    const relisted = await callJson("/api/integrations/tokens", { token: admin.token });
    expect(relisted.body.data.map((t: any) => t.id)).not.toContain(created.body.id);
  });

  it("lets a token revoke itself (sign out)", async () => {
    const { learner } = await createTenant();
    const res = await call(`/api/integrations/tokens/${learner.tokenId}`, {
      method: "DELETE",
      token: learner.token,
    });
    expect(res.status).toBe(204);
    expect((await call("/api/auth/me", { token: learner.token })).status).toBe(401);
  });

  it("records last use, at most once a minute", async () => {
    const { admin } = await createTenant();
    const { token, id } = await mintToken(admin, ["tokens:read"]);
    await call("/api/integrations/tokens", { token });
    await call("/api/integrations/tokens", { token });
    // The write happens after the response (waitUntil); give it a moment.
    let lastUsed: string | null = null;
    for (let i = 0; i < 20 && !lastUsed; i++) {
      await new Promise((r) => setTimeout(r, 50));
      lastUsed = (await lastUsedAt(id)) ?? null;
    }
    expect(lastUsed).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const list = await callJson("/api/integrations/tokens", { token: admin.token });
    expect(list.body.data.find((t: any) => t.id === id).last_used_at).toBe(lastUsed);

    // Within the minute, further use writes nothing: a marker put in its place stays.
    const marker = "2000-01-01T00:00:00Z";
    await db().update(apiTokens).set({ lastUsedAt: marker }).where(eq(apiTokens.id, id));
    for (let i = 0; i < 3; i++) {
      const ctx = createExecutionContext();
      expect((await call("/api/integrations/tokens", { token, ctx })).status).toBe(200);
      // Everything the request deferred (a last-use write would be) has run.
      await waitOnExecutionContext(ctx);
    }
    expect(await lastUsedAt(id)).toBe(marker);
  });

  it("stops accepting a token after its expiry", async () => {
    const { admin } = await createTenant();
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const { token, body } = await mintToken(admin, ["tokens:read"], { expires_at: expiresAt });
    expect(body.expires_at).toBe(expiresAt.replace(/\.\d{3}Z$/, "Z"));
    expect((await call("/api/auth/me", { token })).status).toBe(200);
    // Past the expiry: the clock moves on (the token's gate reads it) instead of the test sleeping.
    advanceClock(Date.parse(body.expires_at) - Date.now() + 100);
    const expired = await callJson("/api/auth/me", { token });
    expect(expired.res.status).toBe(401);
    expect(expired.body.detail).toMatch(/expired/);
  });

  it("replays a creation with the same Idempotency-Key instead of minting twice", async () => {
    const { admin } = await createTenant();
    const headers = { "Idempotency-Key": "create-token-0001" };
    const body = { name: "Once", abilities: ["content:read"] };
    const first = await callJson("/api/integrations/tokens", { token: admin.token, body, headers });
    const second = await callJson("/api/integrations/tokens", { token: admin.token, body, headers });
    expect(first.res.status).toBe(201);
    expect(second.res.status).toBe(201);
    expect(second.res.headers.get("Idempotent-Replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(
      await db().$count(apiTokens, and(eq(apiTokens.name, "Once"), eq(apiTokens.userId, admin.id))),
    ).toBe(1);
    const stored = await db()
      .select({ responseSealed: idempotencyKeys.responseSealed })
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.key, "create-token-0001"))
      .get();
    expect(stored!.responseSealed).toBeTruthy();
    expect(stored!.responseSealed).not.toContain(first.body.token);

    const different = await callJson("/api/integrations/tokens", {
      token: admin.token,
      body: { ...body, name: "Other" },
      headers,
    });
    expect(different.res.status).toBe(422);
    expect(different.body.code).toBe("idempotency_key_reused");
  });

  it("creates exactly one token when twins with one Idempotency-Key race", async () => {
    const { admin } = await createTenant();
    const headers = { "Idempotency-Key": "race-0001" };
    const body = { name: "Raced", abilities: ["content:read"] };
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        callJson("/api/integrations/tokens", { token: admin.token, body, headers }),
      ),
    );
    const statuses = results.map((r) => r.res.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const tokens = new Set(results.filter((r) => r.res.status === 201).map((r) => r.body.token));
    expect(tokens.size).toBe(1);
    expect(await db().$count(apiTokens, eq(apiTokens.name, "Raced"))).toBe(1);
  });

  it("never replays one token's response to another token of the same user", async () => {
    const { admin } = await createTenant();
    const headers = { "Idempotency-Key": "broad-token-0001" };
    const body = { name: "Broad", abilities: ["webhooks:write", "exports:write"] };
    const first = await callJson("/api/integrations/tokens", { token: admin.token, body, headers });
    expect(first.res.status).toBe(201);

    const narrow = await mintToken(admin, ["tokens:read", "tokens:write"]);
    const resent = await callJson("/api/integrations/tokens", { token: narrow.token, body, headers });
    expect(resent.res.status).toBe(403);
    expect(resent.res.headers.get("Idempotent-Replayed")).toBeNull();
    expect(resent.body.code).toBe("forbidden");
    expect(JSON.stringify(resent.body)).not.toContain(first.body.token);
  });

  it("keeps one caller's Idempotency-Key apart from another's", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const headers = { "Idempotency-Key": "shared-key-0001" };
    const first = await callJson("/api/integrations/tokens", {
      token: a.admin.token,
      body: { name: "A", abilities: ["content:read"] },
      headers,
    });
    const second = await callJson("/api/integrations/tokens", {
      token: b.admin.token,
      body: { name: "B", abilities: ["content:read"] },
      headers,
    });
    expect(first.res.status).toBe(201);
    expect(second.res.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
  });
});
