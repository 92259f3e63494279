import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { institutionBudgetFor, type Principal } from "../../src/platform/auth/principal";
import { advanceClock, resetClock } from "../../src/platform/service/clock";
import { call } from "../helpers/api";
import {
  createPlatformAdmin,
  createTenant,
  insertUser,
  mintToken,
  signIn,
  type Tenant,
} from "../helpers/tenants";

// vitest.config.ts shortens the rolling window to 10 s; production keeps 60 s.
const WINDOW = 10;

/**
 * Four unused tokens of four users of one institution (so that no user's share of the budget is what
 * stops them): two members' sessions, an API token minted by the admin (whose own token is then not
 * among them) and a further learner's session.
 */
async function fourTokens(tenant: Tenant): Promise<string[]> {
  const integration = await mintToken(tenant.admin, ["content:read"]);
  return [tenant.instructor.token, tenant.learner.token, integration.token, await memberToken(tenant)];
}

/** The session of a new learner of the tenant's institution. */
async function memberToken(tenant: Tenant): Promise<string> {
  const member = await insertUser("learner", tenant.institution.id);
  return (await signIn(member.email)).token;
}

async function burst(tokens: string[], each: number): Promise<Response[]> {
  return Promise.all(
    tokens.flatMap((token) => Array.from({ length: each }, () => call("/api/auth/me", { token }))),
  );
}

function principal(role: string, plan: "free" | "pro" | "enterprise" | null, rateLimitPerMinute: number) {
  return {
    token: { id: "tok", kind: "api", name: "t", abilities: [], granted: [], expiresAt: null },
    user: { id: "usr", email: "u@example.test", name: "U", role, timeZone: "UTC" },
    institution: plan ? { id: "ins", slug: "ins", name: "Ins", plan } : null,
    rateLimitPerMinute,
  } as Principal;
}

afterEach(() => resetClock());

describe("the institution-wide budget", () => {
  it("is 300 for Free, 5,000 for Pro, five times the per-token limit for Enterprise, half of it per user; staff are exempt", () => {
    expect(institutionBudgetFor(principal("learner", "free", 100))).toEqual({
      institutionId: "ins",
      limit: 300,
      userId: "usr",
      userLimit: 150,
    });
    expect(institutionBudgetFor(principal("instructor", "pro", 1000))).toMatchObject({
      limit: 5000,
      userLimit: 2500,
    });
    expect(institutionBudgetFor(principal("institution_admin", "enterprise", 2500))).toMatchObject({
      limit: 12_500,
      userLimit: 6250,
    });
    // Half the budget is never below one token's own limit.
    expect(institutionBudgetFor(principal("learner", "enterprise", 1))?.userLimit).toBe(2);
    expect(institutionBudgetFor(principal("platform_admin", "enterprise", 10_000))).toBeNull();
    expect(institutionBudgetFor(principal("platform_admin", null, 10_000))).toBeNull();
  });

  it("stops a Free institution's tokens together at 300 a window, whatever each token has left", async () => {
    const tenant = await createTenant({ plan: "free" });
    const tokens = await fourTokens(tenant);
    // 4 × 100 = 400 asked for; each token alone may make 100.
    const responses = await burst(tokens, 100);
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    // Exact up to what the gates hold leased and have not used yet: at most 6 each (a fiftieth of 300).
    expect(ok.length).toBeLessThanOrEqual(300);
    expect(ok.length).toBeGreaterThanOrEqual(300 - 4 * 6);
    expect(ok.length + refused.length).toBe(400);
    for (const res of refused) {
      expect(res.headers.get("RateLimit-Policy")).toBe(`"institution";q=300;w=${WINDOW}`);
      expect(res.headers.get("RateLimit")).toMatch(/^"institution";r=0;t=\d+$/);
      const retryAfter = Number(res.headers.get("Retry-After"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(WINDOW);
    }
    const body = await refused[0]?.json<any>();
    expect(body).toMatchObject({ status: 429, code: "rate_limited" });
    expect(body.detail).toContain("institution");

    // A new member's first token is refused too: the budget is the institution's.
    const member = await insertUser("learner", tenant.institution.id);
    const other = await call("/api/auth/me", { token: (await signIn(member.email)).token });
    expect(other.status).toBe(429);
    expect(other.headers.get("RateLimit-Policy")).toBe(`"institution";q=300;w=${WINDOW}`);

    // Once the window has slid past (the clock moved on, not slept out), the institution's tokens
    // are served again.
    const wait = Math.max(...refused.map((r) => Number(r.headers.get("Retry-After"))));
    advanceClock(wait * 1000 + 1100);
    expect((await call("/api/auth/me", { token: tenant.learner.token })).status).toBe(200);
  });

  it("gives an Enterprise institution five times its own per-token limit", async () => {
    const tenant = await createTenant({ plan: "enterprise", rateLimit: 20 });
    // Six users' tokens (one user's share, 50, is more than one token's 20 anyway).
    const tokens = [...(await fourTokens(tenant)), await memberToken(tenant), await memberToken(tenant)];
    const responses = await burst(tokens, 20);
    const ok = responses.filter((r) => r.status === 200);
    // 6 × 20 = 120 asked for, 100 allowed; a fiftieth of 100 is a lease of 2 at most.
    expect(ok.length).toBeLessThanOrEqual(100);
    expect(ok.length).toBeGreaterThanOrEqual(100 - 6 * 2);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]?.headers.get("RateLimit-Policy")).toBe(`"institution";q=100;w=${WINDOW}`);
  });

  it("keeps each token's own limit and headers below the institution's", async () => {
    const tenant = await createTenant({ plan: "free" });
    const responses = await burst([tenant.admin.token], 110);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(100);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused).toHaveLength(10);
    expect(refused[0]?.headers.get("RateLimit-Policy")).toBe(`"minute";q=100;w=${WINDOW}`);
  });

  it("stops one user's tokens together at half the institution's budget, leaving the rest to the others", async () => {
    const tenant = await createTenant({ plan: "free" });
    // An admin's integration, minted before the learner starts.
    const integration = (await mintToken(tenant.admin, ["content:read"])).token;
    // Three tokens of one learner (three sessions), each allowed 100 on its own: 300 asked for.
    const learnerTokens = [
      tenant.learner.token,
      (await signIn(tenant.learner.email)).token,
      (await signIn(tenant.learner.email)).token,
    ];
    const responses = await burst(learnerTokens, 100);
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    // Half of 300, exact up to what the three gates hold leased and unused (at most 6 each).
    expect(ok.length).toBeLessThanOrEqual(150);
    expect(ok.length).toBeGreaterThanOrEqual(150 - 3 * 6);
    expect(ok.length + refused.length).toBe(300);
    for (const res of refused) {
      expect(res.headers.get("RateLimit-Policy")).toBe(`"user";q=150;w=${WINDOW}`);
      expect(res.headers.get("RateLimit")).toMatch(/^"user";r=0;t=\d+$/);
      const retryAfter = Number(res.headers.get("Retry-After"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(WINDOW);
    }
    const body = await refused[0]?.json<any>();
    expect(body).toMatchObject({ status: 429, code: "rate_limited" });
    expect(body.detail).toContain("your share of the institution's budget");

    // The same window: the learner's next token is refused too, while the admin's integration and
    // another member are served from the half the learner could not take.
    const fourth = await call("/api/auth/me", { token: (await signIn(tenant.learner.email)).token });
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get("RateLimit-Policy")).toBe(`"user";q=150;w=${WINDOW}`);
    const admin = await call("/api/auth/me", { token: integration });
    expect(admin.status).toBe(200);
    expect(admin.headers.get("RateLimit-Policy")).toBe(`"minute";q=100;w=${WINDOW}`);
    const others = await burst([tenant.instructor.token], 100);
    expect(others.filter((r) => r.status === 200)).toHaveLength(100);
  });

  it("announces the user's share on admitted responses once it is the limit closer to running out", async () => {
    const tenant = await createTenant({ plan: "free" });
    const second = (await signIn(tenant.learner.email)).token;
    // One token alone: its own 100 is closer to running out than the user's 150.
    const alone = await call("/api/auth/me", { token: tenant.learner.token });
    expect(alone.headers.get("RateLimit-Policy")).toBe(`"minute";q=100;w=${WINDOW}`);
    await burst([tenant.learner.token], 89);
    // The second token has 99 of its own left, but the user only about 60 of the share.
    const res = await call("/api/auth/me", { token: second });
    expect(res.status).toBe(200);
    expect(res.headers.get("RateLimit-Policy")).toBe(`"user";q=150;w=${WINDOW}`);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("150");
    const remaining = Number(res.headers.get("X-RateLimit-Remaining"));
    expect(remaining).toBeLessThanOrEqual(150 - 90);
    expect(remaining).toBeGreaterThanOrEqual(150 - 91 - 2 * 6);
    expect(res.headers.get("RateLimit")).toBe(
      `"user";r=${remaining};t=${res.headers.get("X-RateLimit-Reset")}`,
    );
  });

  it("does not apply to platform staff", async () => {
    const staff = await createPlatformAdmin();
    const responses = await burst([staff.token], 350);
    expect(responses.every((r) => r.status === 200)).toBe(true);
  });
});

describe("the institution's object: a lease counts against the budget and the user's share together", () => {
  function budgetObject() {
    return env.INSTITUTION_BUDGET.get(env.INSTITUTION_BUDGET.idFromName(`ins_unit_${crypto.randomUUID()}`));
  }
  const alice = { id: "usr_alice", limit: 10 };
  const bob = { id: "usr_bob", limit: 10 };

  it("grants a user no more than the share, names the share when it refuses, and leaves others the rest", async () => {
    const budget = budgetObject();
    const first = await budget.lease(20, WINDOW, 8, undefined, alice);
    expect(first).toMatchObject({ granted: 8, policy: "institution" });
    // Only 2 of the 8 asked for are left of alice's share.
    expect((await budget.lease(20, WINDOW, 8, undefined, alice)).granted).toBe(2);
    const refused = await budget.lease(20, WINDOW, 8, undefined, alice);
    expect(refused).toMatchObject({ granted: 0, policy: "user", limit: 10, remaining: 0 });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(WINDOW);
    // The refusal counted nothing: bob gets the institution's other 10, then the institution refuses.
    expect((await budget.lease(20, WINDOW, 10, undefined, bob)).granted).toBe(10);
    expect(await budget.lease(20, WINDOW, 1, undefined, { id: "usr_carol", limit: 10 })).toMatchObject({
      granted: 0,
      policy: "institution",
      limit: 20,
    });
  });

  it("takes returned units back from the user's share as well as from the budget", async () => {
    const budget = budgetObject();
    const grant = await budget.lease(20, WINDOW, 10, undefined, alice);
    expect(grant.granted).toBe(10);
    await budget.giveBack({ second: grant.second, units: 4, userId: alice.id });
    expect((await budget.lease(20, WINDOW, 10, undefined, alice)).granted).toBe(4);
    // Given back within a lease call, too.
    const again = await budget.lease(
      20,
      WINDOW,
      1,
      { second: grant.second, units: 3, userId: alice.id },
      alice,
    );
    expect(again.granted).toBe(1);
    expect((await budget.lease(20, WINDOW, 10, undefined, alice)).granted).toBe(2);
  });

  it("counts a lease without a user (a gate of the previous code version) against the budget alone", async () => {
    const budget = budgetObject();
    expect((await budget.lease(20, WINDOW, 15)).granted).toBe(15);
    expect((await budget.lease(20, WINDOW, 15, undefined, alice)).granted).toBe(5);
  });
});
