import { describe, expect, it } from "vitest";
import { call, callJson } from "../helpers/api";
import { createPlatformAdmin, createTenant, mintToken } from "../helpers/tenants";

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
    // A session was granted `*`: shown so, and expanded to the role in effective_abilities.
    expect(body.token.abilities).toEqual(["*"]);
    expect(body.token.effective_abilities).toEqual([
      "tokens:read",
      "tokens:write",
      "content:read",
      "progress:read",
      "progress:write",
    ]);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
  });

  it("shows a token's abilities as the token list and its creation do", async () => {
    const tenant = await createTenant();
    const narrow = await mintToken(tenant.instructor, ["members:read", "content:read"]);
    const wildcard = await mintToken(tenant.instructor, ["*"]);
    const list = await callJson("/api/integrations/tokens?per_page=100", { token: tenant.instructor.token });
    expect(list.res.status).toBe(200);
    const listed = (id: string) => list.body.data.find((t: any) => t.id === id).abilities;
    for (const [label, token, id, created] of [
      ["session", tenant.instructor.token, tenant.instructor.tokenId, null],
      ["narrow", narrow.token, narrow.id, narrow.body],
      ["wildcard", wildcard.token, wildcard.id, wildcard.body],
    ] as const) {
      const me = await callJson("/api/auth/me", { token });
      expect(me.res.status, label).toBe(200);
      expect(me.body.token.id, label).toBe(id);
      expect(me.body.token.abilities, label).toEqual(listed(id));
      if (created) expect(created.abilities, label).toEqual(listed(id));
    }
    const session = await callJson("/api/auth/me", { token: tenant.instructor.token });
    expect(session.body.token.abilities).toEqual(["*"]);
    expect(session.body.token.effective_abilities).toContain("members:read");
    const me = await callJson("/api/auth/me", { token: narrow.token });
    expect(me.body.token.abilities).toEqual(["members:read", "content:read"]);
    // The catalogue's order, and only what the role allows.
    expect(me.body.token.effective_abilities).toEqual(["content:read", "members:read"]);

    // Demoted to learner: the grant is unchanged, what it may do shrinks to the new role.
    const demoted = await callJson(
      `/api/institutions/${tenant.institution.id}/members/${tenant.instructor.id}`,
      {
        method: "PATCH",
        token: tenant.admin.token,
        body: { role: "learner" },
      },
    );
    expect(demoted.res.status, JSON.stringify(demoted.body)).toBe(200);
    const after = await callJson("/api/auth/me", { token: narrow.token });
    expect(after.body.token.abilities).toEqual(["members:read", "content:read"]);
    expect(after.body.token.effective_abilities).toEqual(["content:read"]);
  });

  it("gives platform staff the platform plan and limit", async () => {
    const admin = await createPlatformAdmin();
    const { body } = await callJson("/api/auth/me", { token: admin.token });
    expect(body.institution).toBeNull();
    expect(body.plan).toBe("platform");
    expect(body.rate_limit.limit).toBe(10_000);
    expect(body.token.abilities).toEqual(["*"]);
    expect(body.token.effective_abilities).toContain("institutions:write");
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
