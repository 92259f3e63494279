import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashPassword } from "../../src/platform/crypto/passwords";
import { callJson } from "../helpers/api";
import { freshIp, insertUser, PASSWORD } from "../helpers/tenants";

function signIn(body: unknown, ip = freshIp()) {
  return callJson("/api/auth/sign-in", { body, headers: { "CF-Connecting-IP": ip } });
}

describe("POST /api/auth/sign-in", () => {
  it("returns a bearer token with an expiry of 30 days and the user", async () => {
    const user = await insertUser("learner", null);
    const before = Date.now();
    const { res, body } = await signIn({ email: user.email, password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(body.token).toMatch(/^lng_[A-Za-z0-9_-]{43}$/);
    expect(body.token_type).toBe("Bearer");
    expect(body.user).toMatchObject({ id: user.id, email: user.email, role: "learner" });
    const days = (Date.parse(body.expires_at) - before) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThan(30.01);
    const me = await callJson("/api/auth/me", { token: body.token });
    expect(me.res.status).toBe(200);
    expect(me.body.user.id).toBe(user.id);
  });

  it("ignores the case of the e-mail address", async () => {
    const user = await insertUser("learner", null);
    const { res } = await signIn({ email: user.email.toUpperCase(), password: PASSWORD });
    expect(res.status).toBe(200);
  });

  it("answers a wrong password and an unknown e-mail with the same 401", async () => {
    const user = await insertUser("learner", null);
    const wrongPassword = await signIn({ email: user.email, password: "not the password" });
    const unknownEmail = await signIn({ email: "nobody@example.test", password: PASSWORD });
    for (const { res, body } of [wrongPassword, unknownEmail]) {
      expect(res.status).toBe(401);
      expect(res.headers.get("Content-Type")).toBe("application/problem+json");
      expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
      expect(body.code).toBe("invalid_credentials");
    }
    const { request_id: _a, ...first } = wrongPassword.body;
    const { request_id: _b, ...second } = unknownEmail.body;
    expect(first).toEqual(second);
  });

  it("never stores the session token in plain text", async () => {
    const user = await insertUser("learner", null);
    const { body } = await signIn({ email: user.email, password: PASSWORD });
    const row = await env.DB.prepare("SELECT * FROM api_tokens WHERE id = ?")
      .bind(body.token_id)
      .first<Record<string, unknown>>();
    expect(row).not.toBeNull();
    expect(Object.values(row!)).not.toContain(body.token);
    expect(row!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("upgrades a hash made with weaker parameters on the next successful sign-in", async () => {
    const user = await insertUser("learner", null);
    await env.DB.prepare("UPDATE users SET password_hash = ? WHERE id = ?")
      .bind(await hashPassword(PASSWORD, 1_000), user.id)
      .run();
    const { res } = await signIn({ email: user.email, password: PASSWORD });
    expect(res.status).toBe(200);
    const row = await env.DB.prepare("SELECT password_hash FROM users WHERE id = ?")
      .bind(user.id)
      .first<{ password_hash: string }>();
    expect(row!.password_hash).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect((await signIn({ email: user.email, password: PASSWORD })).res.status).toBe(200);
  });

  it("rejects bad input with every failing field and unknown fields", async () => {
    const { res, body } = await signIn({ email: "not-an-email", remember: true });
    expect(res.status).toBe(422);
    expect(body.code).toBe("validation_failed");
    expect(body.errors).toEqual(
      expect.arrayContaining([
        { path: "email", message: "must be an e-mail address" },
        { path: "password", message: "is required" },
        { path: "remember", message: "is not a recognised field" },
      ]),
    );
  });

  it("locks an e-mail address after 10 failures in 15 minutes, from any address, and then refuses even the right password", async () => {
    const user = await insertUser("learner", null);
    for (let i = 0; i < 10; i++) {
      const { res } = await signIn({ email: user.email, password: `guess ${i}` });
      expect(res.status).toBe(401);
    }
    const { res, body } = await signIn({ email: user.email, password: PASSWORD });
    expect(res.status).toBe(429);
    expect(body.code).toBe("rate_limited");
    const retryAfter = Number(res.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // The headers describe the e-mail's limit that refused it, not the address's, which still has room.
    expect(res.headers.get("X-RateLimit-Limit")).toBe("10");
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(res.headers.get("RateLimit-Policy")).toBe('"sign-in-failures";q=10;w=900');
    expect(res.headers.get("RateLimit")).toMatch(/^"sign-in-failures";r=0;t=\d+$/);
    expect(Number(res.headers.get("X-RateLimit-Reset"))).toBeGreaterThanOrEqual(retryAfter);
  });

  it("does not count successful sign-ins against the e-mail's failure budget", async () => {
    const user = await insertUser("learner", null);
    for (let i = 0; i < 12; i++) {
      const { res } = await signIn({ email: user.email, password: PASSWORD });
      expect(res.status).toBe(200);
    }
    for (let i = 0; i < 9; i++) await signIn({ email: user.email, password: "wrong" });
    const { res } = await signIn({ email: user.email, password: PASSWORD });
    expect(res.status).toBe(200);
  });

  it("limits sign-in attempts per client address", async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const { res } = await signIn({ email: `someone${i}@example.test`, password: "x" }, ip);
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
  });
});
