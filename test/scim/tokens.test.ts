import { describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { createTenant, mintToken } from "../helpers/tenants";
import {
  ERROR_SCHEMA,
  issueScimToken,
  scim,
  scimTenant,
  scimTokensPath,
  USER_SCHEMA,
  uniqueEmail,
} from "./support";

describe("SCIM tokens", () => {
  it("issues a token shown once, lists it without its value, and revokes it at once", async () => {
    const tenant = await createTenant();
    const created = await callJson(scimTokensPath(tenant.institution.id), {
      token: tenant.admin.token,
      body: { name: "Okta production" },
    });
    expect(created.res.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      name: "Okta production",
      token: expect.stringMatching(/^scim_[A-Za-z0-9_-]{43}$/),
      scim_base_url: "https://api.lingua.test/scim/v2",
      last_used_at: null,
    });
    expect(created.body.prefix).toBe(created.body.token.slice(0, 11));

    const used = await scim("/Users", { token: created.body.token });
    expect(used.res.status).toBe(200);
    expect(used.res.headers.get("Content-Type")).toBe("application/scim+json");
    expect(used.res.headers.get("X-RateLimit-Limit")).toBe("1000");

    const list = await callJson(scimTokensPath(tenant.institution.id), { token: tenant.admin.token });
    expect(list.res.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ id: created.body.id, name: "Okta production" });
    expect(list.body.data[0].token).toBeUndefined();
    expect(list.body.data[0].last_used_at).not.toBeNull();
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);

    const revoked = await callJson(`${scimTokensPath(tenant.institution.id)}/${created.body.id}`, {
      method: "DELETE",
      token: tenant.admin.token,
    });
    expect(revoked.res.status).toBe(204);
    const after = await scim("/Users", { token: created.body.token });
    expect(after.res.status).toBe(401);
    expect(after.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: "401" });
    expect(after.res.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);

    const again = await callJson(`${scimTokensPath(tenant.institution.id)}/${created.body.id}`, {
      method: "DELETE",
      token: tenant.admin.token,
    });
    expect(again.res.status).toBe(404);
  });

  it("needs sso:write to issue and sso:read to list; another institution's id is 404", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const reader = await mintToken(tenant.admin, ["sso:read"]);
    const refused = await callJson(scimTokensPath(tenant.institution.id), { token: reader.token, body: {} });
    expect(refused.res.status).toBe(403);
    const listed = await callJson(scimTokensPath(tenant.institution.id), { token: reader.token });
    expect(listed.res.status).toBe(200);
    const foreign = await callJson(scimTokensPath(other.institution.id), {
      token: tenant.admin.token,
      body: {},
    });
    expect(foreign.res.status).toBe(404);
    const learner = await callJson(scimTokensPath(tenant.institution.id), {
      token: tenant.learner.token,
      body: {},
    });
    expect(learner.res.status).toBe(403);
  });

  it("answers 401 in SCIM's error schema without a token, with an unknown one, or with an API token", async () => {
    const tenant = await createTenant();
    const none = await scim("/Users", { token: "" });
    expect(none.res.status).toBe(401);
    expect(none.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: "401" });
    const unknown = await scim("/Users", { token: `scim_${"A".repeat(43)}` });
    expect(unknown.res.status).toBe(401);
    const apiToken = await scim("/Users", { token: tenant.admin.token });
    expect(apiToken.res.status).toBe(401);
  });

  it("keeps tenants apart: another institution's token sees and changes nothing", async () => {
    const { tenant, scimToken } = await scimTenant();
    const other = await scimTenant();
    const email = uniqueEmail();
    const created = await scim("/Users", {
      token: scimToken,
      body: { schemas: [USER_SCHEMA], userName: email, name: { givenName: "Ana", familyName: "Lima" } },
    });
    expect(created.res.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;

    const listed = await scim("/Users", { token: other.scimToken });
    expect(listed.body.totalResults).toBe(3); // its own admin, instructor and learner
    expect(listed.body.Resources.map((u: any) => u.id)).not.toContain(id);
    const filtered = await scim(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`, {
      token: other.scimToken,
    });
    expect(filtered.body.totalResults).toBe(0);
    expect((await scim(`/Users/${id}`, { token: other.scimToken })).res.status).toBe(404);
    expect((await scim(`/Users/${tenant.admin.id}`, { token: other.scimToken })).res.status).toBe(404);
    const patched = await scim(`/Users/${id}`, {
      token: other.scimToken,
      method: "PATCH",
      body: { Operations: [{ op: "replace", value: { active: false } }] },
    });
    expect(patched.res.status).toBe(404);
    expect((await scim(`/Users/${id}`, { token: other.scimToken, method: "DELETE" })).res.status).toBe(404);
    const mine = await scim(`/Users/${id}`, { token: scimToken });
    expect(mine.body.active).toBe(true);
  });

  it("turns the department-to-group setting on and off", async () => {
    const tenant = await createTenant();
    const path = `/api/institutions/${tenant.institution.id}/scim`;
    const before = await callJson(path, { token: tenant.admin.token });
    expect(before.res.status).toBe(200);
    expect(before.body).toEqual({
      scim_base_url: "https://api.lingua.test/scim/v2",
      department_as_group: false,
      active_tokens: 0,
    });
    await issueScimToken(tenant);
    const put = await callJson(path, {
      method: "PUT",
      token: tenant.admin.token,
      body: { department_as_group: true },
    });
    expect(put.res.status).toBe(200);
    expect(put.body).toMatchObject({ department_as_group: true, active_tokens: 1 });
    const bad = await callJson(path, {
      method: "PUT",
      token: tenant.admin.token,
      body: { department_as_group: "yes" },
    });
    expect(bad.res.status).toBe(422);
  });

  it("limits each SCIM token per rolling window like the API, in SCIM's error schema", async () => {
    const { scimToken } = await scimTenant({ plan: "enterprise", rateLimit: 3 });
    for (let i = 0; i < 3; i++) {
      const ok = await scim("/ServiceProviderConfig", { token: scimToken });
      expect(ok.res.status).toBe(200);
      expect(ok.res.headers.get("X-RateLimit-Remaining")).toBe(String(2 - i));
    }
    const over = await scim("/Users", { token: scimToken });
    expect(over.res.status).toBe(429);
    expect(over.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: "429" });
    expect(Number(over.res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(over.res.headers.get("RateLimit-Policy")).toBe('"minute";q=3;w=10');
  });
});
