import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { ltiConsumers, ltiKeys } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { dohStub, uniqueName } from "../helpers/receiver-doh";
import { createPlatformAdmin, createTenant, mintToken } from "../helpers/tenants";
import { platformSimulator, registerPlatform } from "./support";

const doh = dohStub();

it("each registration publishes its own RS256 key set at its tool.jwks_url, generated on first need, cacheable for five minutes", async () => {
  const tenant = await createTenant();
  const { consumer } = await registerPlatform(tenant.admin);
  const { consumer: other } = await registerPlatform(tenant.admin);
  expect(consumer.tool.jwks_url).toBe(`https://api.lingua.test/api/lti/jwks/${consumer.id}`);
  expect(consumer.tool.launch_url).toBe(`https://api.lingua.test/api/lti/callback/${consumer.id}`);
  expect(consumer.tool.redirect_uris).toEqual([consumer.tool.launch_url]);
  const [a, b, c] = await Promise.all([
    callJson(consumer.tool.jwks_url),
    callJson(consumer.tool.jwks_url),
    callJson(consumer.tool.jwks_url),
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
  const stored = await database(env.DB)
    .select({ sealed: ltiKeys.privateKeySealed })
    .from(ltiKeys)
    .where(eq(ltiKeys.consumerId, consumer.id));
  expect(stored).toHaveLength(1);
  expect(stored[0]?.sealed).toMatch(/^v2\./);
  expect(stored[0]?.sealed).not.toContain(key.n);
  // Another registration, even of the same institution, has keys of its own.
  const theirs = await callJson(other.tool.jwks_url);
  expect(theirs.res.status).toBe(200);
  expect(theirs.body.keys).toHaveLength(1);
  expect(theirs.body.keys[0].kid).not.toBe(key.kid);
  expect(theirs.body.keys[0].n).not.toBe(key.n);
  // No registration, no keys; the platform-wide key set is gone.
  const unknown = await callJson("/api/lti/jwks/ltc_nope");
  expect(unknown.res.status).toBe(404);
  expect(unknown.body.code).toBe("not_found");
  expect((await callJson("/api/lti/jwks")).res.status).toBe(404);
  expect(await database(env.DB).$count(ltiKeys, eq(ltiKeys.consumerId, "ltc_nope"))).toBe(0);
  // Deleting the registration deletes its keys.
  await callJson(`/api/integrations/lti-consumers/${other.id}`, {
    token: tenant.admin.token,
    method: "DELETE",
  });
  expect(await database(env.DB).$count(ltiKeys, eq(ltiKeys.consumerId, other.id))).toBe(0);
  expect((await callJson(other.tool.jwks_url)).res.status).toBe(404);
});

it("a registration's key rotates on its own (its admins, platform staff); the old key stays published; another institution's id is 404", async () => {
  const [tenant, stranger] = await Promise.all([createTenant(), createTenant()]);
  const { consumer } = await registerPlatform(tenant.admin);
  const { consumer: other } = await registerPlatform(tenant.admin);
  const rotate = (id: string, token: string) =>
    callJson(`/api/integrations/lti-consumers/${id}/keys/rotate`, { token, method: "POST" });
  const before = (await callJson(consumer.tool.jwks_url)).body.keys;
  const otherBefore = (await callJson(other.tool.jwks_url)).body.keys;
  const { res, body } = await rotate(consumer.id, tenant.admin.token);
  expect(res.status).toBe(200);
  expect(body.retired_kid).toBe(before[0].kid);
  expect(body.current_kid).not.toBe(before[0].kid);
  const published = Date.parse(body.retired_key_published_until) - Date.now();
  expect(published).toBeGreaterThan(7 * 86_400_000 - 60_000);
  expect(published).toBeLessThanOrEqual(7 * 86_400_000);
  const after = (await callJson(consumer.tool.jwks_url)).body.keys;
  expect(after.map((k: any) => k.kid)).toEqual([body.current_kid, before[0].kid]);
  expect(body.keys).toEqual(after);
  // The other registration's keys did not move.
  expect((await callJson(other.tool.jwks_url)).body.keys).toEqual(otherBefore);

  // Platform staff may rotate any registration's key.
  const staff = await createPlatformAdmin();
  const byStaff = await rotate(consumer.id, staff.token);
  expect(byStaff.res.status).toBe(200);
  expect(byStaff.body.retired_kid).toBe(body.current_kid);

  // Another institution's admin: 404, as for an unknown id, and nothing rotated.
  const current = (await callJson(consumer.tool.jwks_url)).body.keys;
  const foreign = await rotate(consumer.id, stranger.admin.token);
  expect(foreign.res.status).toBe(404);
  expect(foreign.body.code).toBe("not_found");
  expect((await rotate("ltc_nope", tenant.admin.token)).res.status).toBe(404);
  // Without lti:write: 403 naming it.
  const reader = await mintToken(tenant.admin, ["lti:read"]);
  const denied = await rotate(consumer.id, reader.token);
  expect(denied.res.status).toBe(403);
  expect(JSON.stringify(denied.body)).toContain("lti:write");
  expect((await callJson(consumer.tool.jwks_url)).body.keys).toEqual(current);
  // The platform-wide rotation is gone.
  expect(
    (await callJson("/api/integrations/lti-keys/rotate", { token: staff.token, method: "POST" })).res.status,
  ).toBe(404);
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
      login_url: expect.stringMatching(/^https:\/\/api\.lingua\.test\/api\/lti\/login\/ltc_/),
      launch_url: expect.stringMatching(/^https:\/\/api\.lingua\.test\/api\/lti\/callback\/ltc_/),
      jwks_url: expect.stringMatching(/^https:\/\/api\.lingua\.test\/api\/lti\/jwks\/ltc_/),
      redirect_uris: [expect.stringMatching(/^https:\/\/api\.lingua\.test\/api\/lti\/callback\/ltc_/)],
    },
  });
  expect(consumer.tool.login_url).toBe(`https://api.lingua.test/api/lti/login/${consumer.id}`);
  expect(consumer.tool.jwks_url).toBe(`https://api.lingua.test/api/lti/jwks/${consumer.id}`);
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
  const rows = await database(env.DB)
    .select({ institution_id: ltiConsumers.institutionId })
    .from(ltiConsumers)
    .where(and(eq(ltiConsumers.issuer, consumer.issuer), eq(ltiConsumers.clientId, consumer.client_id)));
  expect(rows.map((r) => r.institution_id).sort()).toEqual([a.institution.id, b.institution.id].sort());
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
