import { env } from "cloudflare:test";
import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiTokens } from "../../src/db/schema";
import { mintToken as mintPlainToken } from "../../src/platform/auth/tokens";
import { chunk, rowsPerStatement } from "../../src/platform/batch";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { createTenant, freshIp, PASSWORD } from "../helpers/tenants";

let sequence = 0;

/** Writes tokens straight into D1, as if created earlier; returns their plain values, oldest first. */
async function insertTokens(
  user: { id: string },
  institutionId: string,
  kind: "api" | "session",
  count: number,
  options: { expiresAt?: string | null; createdAt?: (i: number) => string } = {},
): Promise<string[]> {
  const plains: string[] = [];
  const rows: (typeof apiTokens.$inferInsert)[] = [];
  sequence += 1;
  for (let i = 0; i < count; i++) {
    const minted = await mintPlainToken();
    plains.push(minted.plain);
    rows.push({
      id: `tok_limit_${sequence}_${i}`,
      userId: user.id,
      institutionId,
      kind,
      name: `earlier ${i}`,
      tokenHash: minted.hash,
      prefix: minted.displayPrefix,
      abilities: ["*"],
      createdAt: options.createdAt?.(i) ?? "2026-01-01T00:00:00Z",
      expiresAt: options.expiresAt ?? null,
    });
  }
  const db = database(env.DB);
  await db.batch(chunk(rows, rowsPerStatement(12)).map((part) => db.insert(apiTokens).values(part)) as never);
  return plains;
}

function createToken(token: string, name = "integration") {
  return callJson("/api/integrations/tokens", { token, body: { name, abilities: ["content:read"] } });
}

async function liveTokens(userId: string, kind: "api" | "session"): Promise<number> {
  return database(env.DB).$count(
    apiTokens,
    and(eq(apiTokens.userId, userId), eq(apiTokens.kind, kind), isNull(apiTokens.revokedAt)),
  );
}
const liveSessions = (userId: string) => liveTokens(userId, "session");

describe("at most 100 active API tokens per user", () => {
  it("answers the 101st with 409 token_limit_reached and creates again once one is revoked", async () => {
    const { learner, institution } = await createTenant();
    await insertTokens(learner, institution.id, "api", 99);
    const hundredth = await createToken(learner.token);
    expect(hundredth.res.status).toBe(201);

    const refused = await createToken(learner.token);
    expect(refused.res.status).toBe(409);
    expect(refused.res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(refused.body.code).toBe("token_limit_reached");
    expect(refused.body.detail).toContain("100");

    const revoke = await call(`/api/integrations/tokens/${hundredth.body.id}`, {
      method: "DELETE",
      token: learner.token,
    });
    expect(revoke.status).toBe(204);
    expect((await createToken(learner.token)).res.status).toBe(201);
  });

  it("lets exactly as many concurrent creations through as there is room for", async () => {
    const { learner, institution } = await createTenant();
    await insertTokens(learner, institution.id, "api", 95);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createToken(learner.token, `c${i}`)),
    );
    expect(results.filter((r) => r.res.status === 201)).toHaveLength(5);
    expect(results.filter((r) => r.res.status === 409)).toHaveLength(5);
    expect(await liveTokens(learner.id, "api")).toBe(100);
  });

  it("counts neither expired tokens, nor sessions, nor other users' tokens", async () => {
    const { learner, instructor, institution } = await createTenant();
    await insertTokens(learner, institution.id, "api", 60, { expiresAt: "2026-01-02T00:00:00Z" });
    await insertTokens(learner, institution.id, "session", 10);
    await insertTokens(instructor, institution.id, "api", 100);
    await insertTokens(learner, institution.id, "api", 99);
    expect((await createToken(learner.token)).res.status).toBe(201);
    expect((await createToken(learner.token)).res.status).toBe(409);
  });
});

describe("at most 20 live sessions per user", () => {
  function signIn(email: string) {
    return callJson("/api/auth/sign-in", {
      body: { email, password: PASSWORD },
      headers: { "CF-Connecting-IP": freshIp() },
    });
  }

  it("retires the oldest session when a sign-in makes the 21st, at once", async () => {
    const { learner, institution } = await createTenant();
    // With the tenant's own session, 20 live sessions; the oldest is the first of these.
    const earlier = await insertTokens(learner, institution.id, "session", 19, {
      expiresAt: "2099-01-01T00:00:00Z",
      createdAt: (i) => `2026-01-01T00:00:${String(i).padStart(2, "0")}Z`,
    });
    const oldest = earlier[0] as string;
    // Used once, so that its gate holds it as a live session.
    expect((await call("/api/auth/me", { token: oldest })).status).toBe(200);

    const { res } = await signIn(learner.email);
    expect(res.status).toBe(200);
    expect(await liveSessions(learner.id)).toBe(20);
    const retired = await callJson("/api/auth/me", { token: oldest });
    expect(retired.res.status).toBe(401);
    expect(retired.body.detail).toBe("The bearer token has been revoked.");
    // The next oldest still works.
    expect((await call("/api/auth/me", { token: earlier[1] as string })).status).toBe(200);
  });

  it("never leaves more than 20 live sessions after concurrent sign-ins", async () => {
    const { learner, institution } = await createTenant();
    await insertTokens(learner, institution.id, "session", 19, { expiresAt: "2099-01-01T00:00:00Z" });
    const results = await Promise.all(Array.from({ length: 4 }, () => signIn(learner.email)));
    expect(results.every((r) => r.res.status === 200)).toBe(true);
    expect(await liveSessions(learner.id)).toBe(20);
    // The newest sessions are the ones that remain.
    for (const { body } of results) {
      expect((await call("/api/auth/me", { token: body.token })).status).toBe(200);
    }
  });
});
