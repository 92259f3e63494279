import { describe, expect, it } from "vitest";
import { institutionBudgetFor, type Principal } from "../../src/platform/auth/principal";
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
 * Four unused tokens of one institution: two members' sessions and two API tokens (minted by the
 * admin, whose own token is then not among them).
 */
async function fourTokens(tenant: Tenant): Promise<string[]> {
  const first = await mintToken(tenant.admin, ["content:read"]);
  const second = await mintToken(tenant.admin, ["content:read"]);
  return [tenant.instructor.token, tenant.learner.token, first.token, second.token];
}

async function burst(tokens: string[], each: number): Promise<Response[]> {
  return Promise.all(
    tokens.flatMap((token) => Array.from({ length: each }, () => call("/api/auth/me", { token }))),
  );
}

function principal(role: string, plan: "free" | "pro" | "enterprise" | null, rateLimitPerMinute: number) {
  return {
    token: { id: "tok", kind: "api", name: "t", abilities: [], expiresAt: null },
    user: { id: "usr", email: "u@example.test", name: "U", role, timeZone: "UTC" },
    institution: plan ? { id: "ins", slug: "ins", name: "Ins", plan } : null,
    rateLimitPerMinute,
  } as Principal;
}

describe("the institution-wide budget", () => {
  it("is 300 for Free, 5,000 for Pro, five times the per-token limit for Enterprise; staff are exempt", () => {
    expect(institutionBudgetFor(principal("learner", "free", 100))).toEqual({
      institutionId: "ins",
      limit: 300,
    });
    expect(institutionBudgetFor(principal("instructor", "pro", 1000))?.limit).toBe(5000);
    expect(institutionBudgetFor(principal("institution_admin", "enterprise", 2500))?.limit).toBe(12_500);
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

    // Once the window has slid past, the institution's tokens are served again.
    const wait = Math.max(...refused.map((r) => Number(r.headers.get("Retry-After"))));
    await new Promise((r) => setTimeout(r, wait * 1000 + 1100));
    expect((await call("/api/auth/me", { token: tenant.learner.token })).status).toBe(200);
  });

  it("gives an Enterprise institution five times its own per-token limit", async () => {
    const tenant = await createTenant({ plan: "enterprise", rateLimit: 20 });
    const tokens = [...(await fourTokens(tenant)), (await mintToken(tenant.admin, ["content:read"])).token];
    const extra = (await mintToken(tenant.admin, ["content:read"])).token;
    const responses = await burst([...tokens, extra], 20);
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

  it("does not apply to platform staff", async () => {
    const staff = await createPlatformAdmin();
    const responses = await burst([staff.token], 350);
    expect(responses.every((r) => r.status === 200)).toBe(true);
  });
});
