import { describe, expect, it } from "vitest";
import { call, callJson } from "../helpers/api";
import { createTenant, mintToken } from "../helpers/tenants";

function create(token: string, body: unknown) {
  return callJson("/api/integrations/tokens", { token, body });
}

describe("abilities and role ceilings", () => {
  it("refuses abilities beyond the owner's role with a 403 naming them", async () => {
    const { learner, instructor } = await createTenant();
    const asLearner = await create(learner.token, {
      name: "too much",
      abilities: ["content:read", "webhooks:write"],
    });
    expect(asLearner.res.status).toBe(403);
    expect(asLearner.body.detail).toContain("`webhooks:write`");
    const asInstructor = await create(instructor.token, { name: "too much", abilities: ["members:write"] });
    expect(asInstructor.res.status).toBe(403);
    expect(asInstructor.body.detail).toContain("`members:write`");
  });

  it("keeps platform-only abilities from institution admins", async () => {
    const { admin } = await createTenant();
    const res = await create(admin.token, { name: "x", abilities: ["institutions:write"] });
    expect(res.res.status).toBe(403);
  });

  it("expands `*` to the role's ceiling and no further", async () => {
    const { learner } = await createTenant();
    const { token, body } = await mintToken(learner, ["*"]);
    expect(body.abilities).toEqual(["*"]);
    const me = await callJson("/api/auth/me", { token });
    expect(me.body.token.abilities).toEqual(["*"]);
    expect(me.body.token.effective_abilities).toEqual([
      "tokens:read",
      "tokens:write",
      "content:read",
      "progress:read",
      "progress:write",
    ]);
  });

  it("forbids a token without tokens:write to mint tokens, naming the missing ability", async () => {
    const { admin } = await createTenant();
    const { token } = await mintToken(admin, ["tokens:read"]);
    const res = await create(token, { name: "child", abilities: ["tokens:read"] });
    expect(res.res.status).toBe(403);
    expect(res.body.code).toBe("missing_ability");
    expect(res.body.detail).toContain("`tokens:write`");
    const list = await call("/api/integrations/tokens", { token });
    expect(list.status).toBe(200);
  });

  it("forbids a narrow token from minting a broader one", async () => {
    const { admin } = await createTenant();
    const { token } = await mintToken(admin, ["tokens:read", "tokens:write", "content:read"]);
    const broader = await create(token, { name: "child", abilities: ["webhooks:write"] });
    expect(broader.res.status).toBe(403);
    expect(broader.body.detail).toContain("`webhooks:write`");
    const wildcard = await create(token, { name: "child", abilities: ["*"] });
    expect(wildcard.res.status).toBe(403);
    const narrower = await create(token, { name: "child", abilities: ["content:read"] });
    expect(narrower.res.status).toBe(201);
  });

  it("forbids reading tokens without tokens:read", async () => {
    const { admin } = await createTenant();
    const { token } = await mintToken(admin, ["content:read"]);
    const res = await callJson("/api/integrations/tokens", { token });
    expect(res.res.status).toBe(403);
    expect(res.body.detail).toContain("`tokens:read`");
  });

  it.each([
    [{ name: "x", abilities: ["content:fly"] }, "abilities.0"],
    [{ name: "x", abilities: [] }, "abilities"],
    [{ name: "", abilities: ["content:read"] }, "name"],
    [{ name: "x".repeat(101), abilities: ["content:read"] }, "name"],
    [{ abilities: ["content:read"] }, "name"],
    [{ name: "x", abilities: ["content:read"], expires_at: "tomorrow" }, "expires_at"],
    [{ name: "x", abilities: ["content:read"], expires_at: "2020-01-01T00:00:00Z" }, "expires_at"],
    [{ name: "x", abilities: ["content:read"], owner: "someone" }, "owner"],
  ])("rejects %j with 422 on %s and creates nothing", async (body, path) => {
    const { admin } = await createTenant();
    const res = await create(admin.token, body);
    expect(res.res.status).toBe(422);
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors.map((e: any) => e.path)).toContain(path);
    const list = await callJson("/api/integrations/tokens?kind=api", { token: admin.token });
    expect(list.body.meta.total).toBe(0);
  });
});

describe("tenancy", () => {
  it("answers 404 for another institution's token and leaves it working", async () => {
    const acme = await createTenant();
    const globex = await createTenant();
    const { token, id } = await mintToken(globex.admin, ["content:read"]);
    const res = await callJson(`/api/integrations/tokens/${id}`, {
      method: "DELETE",
      token: acme.admin.token,
    });
    expect(res.res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
    expect((await call("/api/auth/me", { token })).status).toBe(200);
    const list = await callJson("/api/integrations/tokens", { token: acme.admin.token });
    expect(list.body.data.map((t: any) => t.id)).not.toContain(id);
  });

  it("shows an institution admin every token of the institution, and a learner only their own", async () => {
    const { admin, learner, instructor } = await createTenant();
    const adminView = await callJson("/api/integrations/tokens?per_page=100", { token: admin.token });
    expect(adminView.body.data.map((t: any) => t.user_id).sort()).toEqual(
      [admin.id, instructor.id, learner.id].sort(),
    );
    const learnerView = await callJson("/api/integrations/tokens", { token: learner.token });
    expect(learnerView.body.data.map((t: any) => t.user_id)).toEqual([learner.id]);
  });

  it("lets an institution admin revoke a member's token but not a learner another member's", async () => {
    const { admin, learner, instructor } = await createTenant();
    expect(
      (
        await call(`/api/integrations/tokens/${instructor.tokenId}`, {
          method: "DELETE",
          token: learner.token,
        })
      ).status,
    ).toBe(404);
    expect(
      (await call(`/api/integrations/tokens/${learner.tokenId}`, { method: "DELETE", token: admin.token }))
        .status,
    ).toBe(204);
    expect((await call("/api/auth/me", { token: learner.token })).status).toBe(401);
  });
});
