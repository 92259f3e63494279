import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { dohStub, uniqueName } from "../helpers/receiver-doh";
import { createPlatformAdmin, createTenant, mintToken } from "../helpers/tenants";
import { platformSimulator, registerPlatform } from "./support";

const doh = dohStub();

it("publishes an RS256 key set generated on first need, cacheable for five minutes", async () => {
  const [a, b, c] = await Promise.all([
    callJson("/api/lti/jwks"),
    callJson("/api/lti/jwks"),
    callJson("/api/lti/jwks"),
  ]);
  expect(a.res.status).toBe(200);
  expect(a.res.headers.get("Cache-Control")).toBe("public, max-age=300");
  expect(a.body.keys).toHaveLength(1);
  const [key] = a.body.keys;
  expect(key).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", e: "AQAB" });
  expect(key.kid).toEqual(expect.any(String));
  expect(key.d).toBeUndefined();
  // Three isolates' worth of first requests at once still end with one current key.
  expect(b.body.keys).toEqual(a.body.keys);
  expect(c.body.keys).toEqual(a.body.keys);
  const stored = await env.DB.prepare(
    "SELECT count(*) AS n, min(private_key_sealed) AS sealed FROM lti_keys",
  ).first<any>();
  expect(stored.n).toBe(1);
  expect(stored.sealed).toMatch(/^v2\./);
  expect(stored.sealed).not.toContain(key.n);
});

it("rotation by platform staff makes a new key current and keeps the old one published", async () => {
  const before = (await callJson("/api/lti/jwks")).body.keys;
  const staff = await createPlatformAdmin();
  const { res, body } = await callJson("/api/integrations/lti-keys/rotate", {
    token: staff.token,
    method: "POST",
  });
  expect(res.status).toBe(200);
  expect(body.retired_kid).toBe(before[0].kid);
  expect(body.current_kid).not.toBe(before[0].kid);
  const published = Date.parse(body.retired_key_published_until) - Date.now();
  expect(published).toBeGreaterThan(7 * 86_400_000 - 60_000);
  expect(published).toBeLessThanOrEqual(7 * 86_400_000);
  const after = (await callJson("/api/lti/jwks")).body.keys;
  expect(after.map((k: any) => k.kid)).toEqual([body.current_kid, before[0].kid]);

  const tenant = await createTenant();
  const denied = await callJson("/api/integrations/lti-keys/rotate", {
    token: tenant.admin.token,
    method: "POST",
  });
  expect(denied.res.status).toBe(403);
});

it("registers a platform and answers the tool URLs to paste into it", async () => {
  const tenant = await createTenant();
  const { consumer, urls, clientId, deploymentId } = await registerPlatform(tenant.admin, {
    auth_token_audience: "https://lms.example/token-audience",
  });
  expect(consumer).toMatchObject({
    id: expect.stringMatching(/^ltc_/),
    institution_id: tenant.institution.id,
    name: "Test LMS",
    issuer: urls.issuer,
    client_id: clientId,
    deployment_ids: [deploymentId],
    auth_login_url: urls.auth_login_url,
    auth_token_url: urls.auth_token_url,
    jwks_url: urls.jwks_url,
    auth_token_audience: "https://lms.example/token-audience",
    tool: {
      login_url: "https://api.lingua.test/api/lti/login",
      launch_url: "https://api.lingua.test/api/lti/callback",
      jwks_url: "https://api.lingua.test/api/lti/jwks",
      redirect_uris: ["https://api.lingua.test/api/lti/callback"],
    },
  });
  const got = await callJson(`/api/integrations/lti-consumers/${consumer.id}`, { token: tenant.admin.token });
  expect(got.body).toEqual(consumer);
  const list = await callJson("/api/integrations/lti-consumers", { token: tenant.admin.token });
  expect(list.body.data).toEqual([consumer]);
  expect(list.body.meta).toMatchObject({ total: 1, current_page: 1 });

  const updated = await callJson(`/api/integrations/lti-consumers/${consumer.id}`, {
    token: tenant.admin.token,
    method: "PUT",
    body: { name: "Canvas", deployment_ids: [deploymentId, "dep-2"] },
  });
  expect(updated.res.status).toBe(200);
  expect(updated.body).toMatchObject({
    name: "Canvas",
    deployment_ids: [deploymentId, "dep-2"],
    issuer: urls.issuer,
  });

  const removed = await callJson(`/api/integrations/lti-consumers/${consumer.id}`, {
    token: tenant.admin.token,
    method: "DELETE",
  });
  expect(removed.res.status).toBe(204);
  const gone = await callJson(`/api/integrations/lti-consumers/${consumer.id}`, {
    token: tenant.admin.token,
  });
  expect(gone.res.status).toBe(404);
});

it("two institutions may register the same issuer and client id (both 201, nothing revealed); a duplicate within one is 409; each sees only its own (404)", async () => {
  const [a, b] = await Promise.all([createTenant(), createTenant()]);
  const { consumer } = await registerPlatform(a.admin);
  const copy = {
    name: "Copy",
    issuer: consumer.issuer,
    client_id: consumer.client_id,
    deployment_ids: ["x"],
    auth_login_url: consumer.auth_login_url,
    auth_token_url: consumer.auth_token_url,
    jwks_url: consumer.jwks_url,
  };
  const same = await callJson("/api/integrations/lti-consumers", { token: b.admin.token, body: copy });
  expect(same.res.status).toBe(201);
  expect(same.body).toMatchObject({
    institution_id: b.institution.id,
    issuer: consumer.issuer,
    deployment_ids: ["x"],
  });
  expect(same.body.id).not.toBe(consumer.id);
  // A second one in the same institution is the only conflict, and says nothing of anybody else's.
  const twice = await callJson("/api/integrations/lti-consumers", {
    token: b.admin.token,
    body: { ...copy, name: "Twice" },
  });
  expect(twice.res.status).toBe(409);
  expect(twice.body.code).toBe("conflict");
  expect(twice.body.detail).toContain("This institution");
  // Renaming another registration of b onto the pair: 409 too; in a's institution the pair is its own.
  const other = await callJson("/api/integrations/lti-consumers", {
    token: b.admin.token,
    body: { ...copy, client_id: "another" },
  });
  expect(other.res.status).toBe(201);
  const renamed = await callJson(`/api/integrations/lti-consumers/${other.body.id}`, {
    token: b.admin.token,
    method: "PUT",
    body: { client_id: consumer.client_id },
  });
  expect(renamed.res.status).toBe(409);
  const rows = await env.DB.prepare(
    "SELECT institution_id FROM lti_consumers WHERE issuer = ? AND client_id = ?",
  )
    .bind(consumer.issuer, consumer.client_id)
    .all<{ institution_id: string }>();
  expect(rows.results.map((r) => r.institution_id).sort()).toEqual(
    [a.institution.id, b.institution.id].sort(),
  );
  for (const method of ["GET", "PUT", "DELETE"]) {
    const foreign = await callJson(`/api/integrations/lti-consumers/${consumer.id}`, {
      token: b.admin.token,
      method,
      ...(method === "PUT" ? { body: { name: "mine" } } : {}),
    });
    expect(foreign.res.status).toBe(404);
  }
  const listed = (await callJson("/api/integrations/lti-consumers", { token: b.admin.token })).body.data;
  expect(listed.map((c: any) => c.id).sort()).toEqual([same.body.id, other.body.id].sort());
  const own = await callJson(`/api/integrations/lti-consumers/${consumer.id}`, { token: a.admin.token });
  expect(own.body).toMatchObject({ name: "Test LMS", institution_id: a.institution.id });
});

it("refuses URLs that are not https or point inside a network, and checks abilities", async () => {
  const tenant = await createTenant();
  const sim = platformSimulator();
  const urls = await sim.configure({});
  const body = {
    name: "LMS",
    issuer: urls.issuer,
    client_id: "c",
    deployment_ids: ["d"],
    auth_login_url: "http://lms.example/authorize",
    auth_token_url: "https://10.0.0.8/token",
    jwks_url: "https://user:pw@lms.example/jwks",
  };
  const production = await callJson("/api/integrations/lti-consumers", {
    token: tenant.admin.token,
    body,
    env: { ALLOW_LOOPBACK_TARGETS: "false" },
  });
  expect(production.res.status).toBe(422);
  expect(production.body.errors.map((e: any) => e.path)).toEqual([
    "auth_login_url",
    "auth_token_url",
    "jwks_url",
  ]);
  const missing = await callJson("/api/integrations/lti-consumers", {
    token: tenant.admin.token,
    body: { name: "LMS", deployment_ids: [] },
  });
  expect(missing.res.status).toBe(422);
  expect(missing.body.errors.map((e: any) => e.path)).toEqual(
    expect.arrayContaining(["issuer", "client_id", "deployment_ids", "auth_login_url"]),
  );

  const reader = await mintToken(tenant.admin, ["lti:read"]);
  const write = await callJson("/api/integrations/lti-consumers", { token: reader.token, body });
  expect(write.res.status).toBe(403);
  expect(write.body.detail).toContain("lti:write");
  const learner = await callJson("/api/integrations/lti-consumers", { token: tenant.learner.token });
  expect(learner.res.status).toBe(403);
});

it("refuses platform URLs whose names resolve inside a network when OUTBOUND_DOH_URL is set", async () => {
  const tenant = await createTenant();
  const sim = platformSimulator();
  const urls = await sim.configure({});
  const inside = uniqueName();
  const outside = uniqueName();
  await doh.script({ [inside]: { A: ["10.0.0.7"] }, [outside]: { A: ["93.184.215.14"] } });
  const register = (jwksHost: string) =>
    callJson("/api/integrations/lti-consumers", {
      token: tenant.admin.token,
      body: {
        name: "LMS",
        issuer: `${urls.issuer}/${jwksHost}`,
        client_id: "c",
        deployment_ids: ["d"],
        auth_login_url: `https://${outside}/authorize`,
        auth_token_url: `https://${outside}/token`,
        jwks_url: `https://${jwksHost}/jwks`,
      },
      // Nothing is fetched at registration; the check resolves names only.
      env: { ALLOW_LOOPBACK_TARGETS: "false", OUTBOUND_DOH_URL: doh.resolverUrl },
    });
  const refused = await register(inside);
  expect(refused.res.status).toBe(422);
  expect(refused.body.errors).toEqual([
    { path: "jwks_url", message: "must not resolve to a private address" },
  ]);
  expect((await register(outside)).res.status).toBe(201);
  expect(await doh.queries(inside)).toBe(2); // A and AAAA, once
});
