import { describe, expect, it } from "vitest";
import { call, callJson } from "../helpers/api";
import { createPlatformAdmin, createTenant } from "../helpers/tenants";

describe("GET /api/auth/me", () => {
  it("describes the caller, the institution, the plan and the token's abilities", async () => {
    const tenant = await createTenant({ plan: "pro" });
    const { res, body } = await callJson("/api/auth/me", { token: tenant.learner.token });
    expect(res.status).toBe(200);
    expect(body.user).toMatchObject({
      id: tenant.learner.id,
      email: tenant.learner.email,
      role: "learner",
      institution_id: tenant.institution.id,
    });
    expect(body.institution).toMatchObject({ id: tenant.institution.id, plan: "pro" });
    expect(body.plan).toBe("pro");
    expect(body.rate_limit.limit).toBe(1000);
    expect(body.token).toMatchObject({ id: tenant.learner.tokenId, kind: "session" });
    expect(body.token.abilities).toEqual([
      "tokens:read",
      "tokens:write",
      "content:read",
      "progress:read",
      "progress:write",
    ]);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
  });

  it("gives platform staff the platform plan and limit", async () => {
    const admin = await createPlatformAdmin();
    const { body } = await callJson("/api/auth/me", { token: admin.token });
    expect(body.institution).toBeNull();
    expect(body.plan).toBe("platform");
    expect(body.rate_limit.limit).toBe(10_000);
    expect(body.token.abilities).toContain("institutions:write");
  });

  it("gives an enterprise institution its own limit", async () => {
    const tenant = await createTenant({ plan: "enterprise", rateLimit: 3000 });
    const { body } = await callJson("/api/auth/me", { token: tenant.admin.token });
    expect(body.rate_limit.limit).toBe(3000);
  });

  it.each([
    ["no header", undefined],
    ["a non-bearer scheme", "Basic dXNlcjpwYXNz"],
    ["a malformed token", "Bearer not-a-token"],
    ["an unknown token", `Bearer lng_${"A".repeat(43)}`],
  ])("answers 401 with WWW-Authenticate for %s", async (_label, authorization) => {
    const res = await call("/api/auth/me", {
      headers: authorization ? { Authorization: authorization } : {},
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
    const body = await res.json<any>();
    expect(body).toMatchObject({
      status: 401,
      code: "unauthenticated",
      type: expect.stringMatching(/\/api\/docs\/errors#unauthenticated$/),
    });
    expect(body.request_id).toBe(res.headers.get("X-Request-Id"));
  });
});
