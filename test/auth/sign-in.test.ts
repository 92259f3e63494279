import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiTokens, users } from "../../src/db/schema";
import { signInFailureKeys } from "../../src/domains/auth/service";
import { hashPassword } from "../../src/platform/crypto/passwords";
import { database } from "../../src/platform/db";
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
    const row = await database(env.DB).select().from(apiTokens).where(eq(apiTokens.id, body.token_id)).get();
    expect(row).toBeDefined();
    expect(Object.values(row!)).not.toContain(body.token);
    expect(row!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("upgrades a hash made with weaker parameters on the next successful sign-in", async () => {
    const user = await insertUser("learner", null);
    await database(env.DB)
      .update(users)
      .set({ passwordHash: await hashPassword(PASSWORD, 1_000) })
      .where(eq(users.id, user.id));
    const { res } = await signIn({ email: user.email, password: PASSWORD });
    expect(res.status).toBe(200);
    const row = await database(env.DB)
      .select({ passwordHash: users.passwordHash })
      .from(users)
      .where(eq(users.id, user.id))
      .get();
    expect(row!.passwordHash).toMatch(/^pbkdf2-sha256\$100000\$/);
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

  it("blocks an (e-mail, address) pair after 10 failures in 15 minutes, whatever the password", async () => {
    const user = await insertUser("learner", null);
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      const { res } = await signIn({ email: user.email, password: `guess ${i}` }, ip);
      expect(res.status).toBe(401);
    }
    const { res, body } = await signIn({ email: user.email, password: PASSWORD }, ip);
    expect(res.status).toBe(429);
    expect(body.code).toBe("rate_limited");
    const retryAfter = Number(res.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // The headers describe the pair's limit that refused it, not the address's, which still has room.
    expect(res.headers.get("X-RateLimit-Limit")).toBe("10");
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(res.headers.get("RateLimit-Policy")).toBe('"sign-in-failures";q=10;w=900');
    expect(res.headers.get("RateLimit")).toMatch(/^"sign-in-failures";r=0;t=\d+$/);
    expect(Number(res.headers.get("X-RateLimit-Reset"))).toBeGreaterThanOrEqual(retryAfter);
    // A wrong password is refused the same way: the 429 tells nothing about the password.
    const wrong = await signIn({ email: user.email, password: "still guessing" }, ip);
    expect(wrong.res.status).toBe(429);
    expect(wrong.res.headers.get("RateLimit-Policy")).toBe('"sign-in-failures";q=10;w=900');
  });

  it("signs the real user in from their own address while ten other addresses guess their password", async () => {
    const user = await insertUser("learner", null);
    const guessers = Array.from({ length: 10 }, () => freshIp());
    await Promise.all(
      guessers.map(async (ip) => {
        for (let i = 0; i < 10; i++) {
          const { res } = await signIn({ email: user.email, password: `guess ${i}` }, ip);
          expect(res.status).toBe(401);
        }
      }),
    );
    // Every guessing address is now blocked for this e-mail, even with the right password…
    for (const ip of guessers) {
      expect((await signIn({ email: user.email, password: PASSWORD }, ip)).res.status).toBe(429);
    }
    // …and the real user, from an address that has not failed for this e-mail, signs in.
    const { res, body } = await signIn({ email: user.email, password: PASSWORD }, freshIp());
    expect(res.status).toBe(200);
    expect(body.user.id).toBe(user.id);
  });

  it("resets a pair's failures when it signs in successfully", async () => {
    const user = await insertUser("learner", null);
    const ip = freshIp();
    for (let i = 0; i < 9; i++) await signIn({ email: user.email, password: "wrong" }, ip);
    expect((await signIn({ email: user.email, password: PASSWORD }, ip)).res.status).toBe(200);
    // Without the reset these would be failures 10 to 18, and the pair would be blocked.
    for (let i = 0; i < 9; i++) {
      expect((await signIn({ email: user.email, password: "wrong" }, ip)).res.status).toBe(401);
    }
    expect((await signIn({ email: user.email, password: PASSWORD }, ip)).res.status).toBe(200);
  });

  it("does not count successful sign-ins as failures", async () => {
    const user = await insertUser("learner", null);
    const ip = freshIp();
    for (let i = 0; i < 12; i++) {
      const { res } = await signIn({ email: user.email, password: PASSWORD }, ip);
      expect(res.status).toBe(200);
    }
  });

  it("blocks an address after 100 failures in an hour across every e-mail, and that address only", async () => {
    const user = await insertUser("learner", null);
    const ip = freshIp();
    // 99 earlier failures of this address, for other e-mails, already counted (filling them over
    // HTTP would take 99 password hashes and the per-minute attempt limit's windows).
    const { address } = await signInFailureKeys("someone-else@example.test", ip);
    const counter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(address));
    for (let i = 0; i < 99; i++) await counter.consume(100, 3600);
    // The 100th failure, for yet another e-mail, is still answered as a failure…
    const last = await signIn({ email: "nobody-here@example.test", password: "guess" }, ip);
    expect(last.res.status).toBe(401);
    // …after which the address is blocked for every e-mail, whatever the password.
    const { res, body } = await signIn({ email: user.email, password: PASSWORD }, ip);
    expect(res.status).toBe(429);
    expect(body.code).toBe("rate_limited");
    expect(res.headers.get("RateLimit-Policy")).toBe('"sign-in-address-failures";q=100;w=3600');
    const retryAfter = Number(res.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // The same user from another address is not affected.
    expect((await signIn({ email: user.email, password: PASSWORD }, freshIp())).res.status).toBe(200);
  });

  it("answers a blocked pair of an unknown e-mail exactly like one of a known e-mail", async () => {
    const user = await insertUser("learner", null);
    const ip = freshIp();
    for (const email of [user.email, "unknown-person@example.test"]) {
      for (let i = 0; i < 10; i++) await signIn({ email, password: "wrong" }, ip);
    }
    const known = await signIn({ email: user.email, password: "wrong" }, ip);
    const unknown = await signIn({ email: "unknown-person@example.test", password: "wrong" }, ip);
    expect(known.res.status).toBe(429);
    expect(unknown.res.status).toBe(429);
    const { request_id: _a, detail: _d1, ...first } = known.body;
    const { request_id: _b, detail: _d2, ...second } = unknown.body;
    expect(first).toEqual(second);
    expect(known.res.headers.get("RateLimit-Policy")).toBe(unknown.res.headers.get("RateLimit-Policy"));
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
