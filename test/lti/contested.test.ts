// Two institutions holding registrations of the same platform (issuer and client id): neither may
// obtain the platform's tokens with the other's trust, switch off the other's launches, or receive them.
import { env } from "cloudflare:test";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { expect, it, vi } from "vitest";
import { ltiConsumers, ltiLaunches, ltiPassbacks, ltiStates, ltiUserLinks } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createTenant, type TestUser } from "../helpers/tenants";
import {
  AGS_CLAIM,
  CALLBACK_URL,
  cachedTokens,
  forgetTokens,
  LTI,
  launchClaims,
  launchThroughPlatform,
  login,
  platformSimulator,
  postCallback,
  type Registered,
  registerPlatform,
  SCORE_SCOPE,
  type Simulator,
} from "./support";

const db = () => database(env.DB);

/** Registers `reg`'s issuer and client id in another institution, pointing at another platform's URLs. */
async function registerCopy(
  reg: Registered,
  admin: TestUser,
  deploymentIds: string[],
  urls: { auth_login_url: string; auth_token_url: string; jwks_url: string },
) {
  const { res, body } = await callJson("/api/integrations/lti-consumers", {
    token: admin.token,
    body: {
      name: "Copy",
      issuer: reg.urls.issuer,
      client_id: reg.clientId,
      deployment_ids: deploymentIds,
      ...urls,
    },
  });
  expect(res.status).toBe(201);
  return body;
}

/** A launch through `loginUrl`, its id_token signed by `signer` (the genuine platform or an attacker's). */
async function launchVia(
  reg: Registered,
  loginUrl: string,
  signer: Simulator,
  claims: Record<string, unknown> = {},
  params: Record<string, string> = {},
) {
  const started = await login(reg, params, undefined, loginUrl);
  if (started.res.status !== 302) return { started, res: null, body: null };
  const idToken = await signer.idToken(launchClaims(reg, started.nonce, claims));
  // Posted where the login asked the platform to post it (an attacker's platform checks nothing).
  const url = started.redirect?.searchParams.get("redirect_uri") ?? undefined;
  const res = await postCallback({ id_token: idToken, state: started.state }, { url });
  return { started, res, body: (await res.json()) as any };
}

function grade(token: string, launchId: string) {
  return callJson(`/api/lti/grade-passback/${launchId}`, {
    token,
    body: { score_given: 1, score_maximum: 1 },
  });
}

it("another institution registering the same issuer and client id cannot obtain the platform's access tokens (its assertions are signed with its own key) nor send a score with one; the owner's passback still works", async () => {
  const [a, b] = await Promise.all([createTenant(), createTenant()]);
  // A registers the LMS, and the LMS is configured with A's registration's tool JWKS URL.
  const reg = await registerPlatform(a.admin);
  await reg.platform.learnToolKeys(reg.consumer);
  const own = await launchVia(reg, reg.consumer.tool.login_url, reg.platform);
  expect(own.res?.status).toBe(200);
  expect((await grade(a.admin.token, own.body.launch.id)).res.status).toBe(200);
  const before = await reg.platform.state();
  expect(before.token_requests.at(-1)).toMatchObject({
    assertion_valid: true,
    verified_with: reg.consumer.tool.jwks_url,
  });

  // B registers the same pair with its own deployment and key set (an attacker's platform), the
  // LMS's real token endpoint, and forges a gradable launch whose line item is the attacker's.
  const attacker = platformSimulator();
  const lair = await attacker.configure({ client_id: reg.clientId });
  const copy = await registerCopy(reg, b.admin, ["dep-b"], {
    auth_login_url: lair.auth_login_url,
    auth_token_url: reg.urls.auth_token_url,
    jwks_url: lair.jwks_url,
  });
  const forged = await launchVia(
    reg,
    copy.tool.login_url,
    attacker,
    {
      [`${LTI}deployment_id`]: "dep-b",
      [AGS_CLAIM]: { scope: [SCORE_SCOPE], lineitem: `${lair.lineitems}/li-x` },
    },
    { lti_deployment_id: "dep-b" },
  );
  expect(forged.res?.status).toBe(200);
  expect(forged.body.launch.consumer_id).toBe(copy.id);

  // B's grade passback: the LMS's token endpoint refuses B's assertion (not signed by a key of A's JWKS URL).
  const stolen = await grade(b.admin.token, forged.body.launch.id);
  expect(stolen.res.status).toBe(502);
  expect(stolen.body).toMatchObject({ code: "lti_platform_rejected", platform_status: 401 });
  const after = await reg.platform.state();
  const attempts = after.token_requests.slice(before.token_requests.length);
  expect(attempts.length).toBeGreaterThan(0);
  for (const attempt of attempts)
    expect(attempt).toMatchObject({
      assertion_valid: false,
      status: 401,
      verified_with: reg.consumer.tool.jwks_url,
      assertion_claims: null,
    });
  expect(after.issued_tokens).toEqual(before.issued_tokens);
  // Nothing reached the attacker's line item, least of all with a token of A's LMS.
  const lairState = await attacker.state();
  expect(lairState.score_requests).toHaveLength(0);
  expect(await cachedTokens(copy.id, "any")).toBe(0);

  // The two registrations publish different keys.
  const keysA = (await callJson(reg.consumer.tool.jwks_url)).body.keys.map((k: any) => k.kid);
  const keysB = (await callJson(copy.tool.jwks_url)).body.keys.map((k: any) => k.kid);
  expect(keysA.some((kid: string) => keysB.includes(kid))).toBe(false);

  // A's own passback still works, with a fresh token too.
  await forgetTokens(reg.consumer.id);
  expect((await grade(a.admin.token, own.body.launch.id)).res.status).toBe(200);
  const last = (await reg.platform.state()).token_requests.at(-1);
  expect(last).toMatchObject({ assertion_valid: true, status: 200 });
  expect(keysA).toContain(last!.assertion_header!.kid);
});

it("changing a registration's token URL, key set, issuer or client id forgets its cached access tokens", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys(reg.consumer);
  const launched = await launchVia(reg, reg.consumer.tool.login_url, reg.platform);
  expect((await grade(tenant.admin.token, launched.body.launch.id)).res.status).toBe(200);
  const cached = () => cachedTokens(reg.consumer.id);
  expect(await cached()).toBe(1);
  const put = (body: Record<string, unknown>) =>
    callJson(`/api/integrations/lti-consumers/${reg.consumer.id}`, {
      token: tenant.admin.token,
      method: "PUT",
      body,
    });
  // A name or deployment change keeps it.
  expect((await put({ name: "Renamed", deployment_ids: [reg.deploymentId, "dep-2"] })).res.status).toBe(200);
  expect(await cached()).toBe(1);
  // A refused change changes nothing.
  const refused = await put({ auth_token_url: "http://10.0.0.1/token" });
  expect(refused.res.status).toBe(422);
  expect(await cached()).toBe(1);
  // The same value again changes nothing; another one forgets the token.
  expect((await put({ auth_token_url: reg.urls.auth_token_url })).res.status).toBe(200);
  expect(await cached()).toBe(1);
  expect((await put({ auth_token_url: `${reg.urls.auth_token_url}?v=2` })).res.status).toBe(200);
  expect(await cached()).toBe(0);
});

it("a token the platform answers after the registration changed is not kept", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys(reg.consumer);
  const launched = await launchVia(reg, reg.consumer.tool.login_url, reg.platform);
  await reg.platform.configure({ token_script: [{ delay_ms: 700 }] });
  const graded = grade(tenant.admin.token, launched.body.launch.id);
  // While the platform takes its time (the passback is claimed, so its registration was read), the
  // registration's token URL is changed.
  for (let i = 0; i < 50; i++) {
    const claimed = await db().$count(ltiPassbacks, eq(ltiPassbacks.launchId, launched.body.launch.id));
    if (claimed) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const changed = await callJson(`/api/integrations/lti-consumers/${reg.consumer.id}`, {
    token: tenant.admin.token,
    method: "PUT",
    body: { auth_token_url: `${reg.urls.auth_token_url}?v=2` },
  });
  expect(changed.res.status).toBe(200);
  expect((await graded).res.status).toBe(200);

  // (A token answered late for the old token URL may sit in the cache under the old version: never read.)
  expect(await cachedTokens(reg.consumer.id)).toBe(0);
});

/** Launches, user links and states of these registrations and institutions (what a launch writes). */
async function written(consumerIds: string[], institutionIds: string[]) {
  return {
    launches: await db().$count(
      ltiLaunches,
      and(eq(ltiLaunches.status, "succeeded"), inArray(ltiLaunches.institutionId, institutionIds)),
    ),
    links: await db().$count(ltiUserLinks, inArray(ltiUserLinks.consumerId, consumerIds)),
  };
}

it("a registration of the same pair and deployment made earlier by another institution neither blocks the launches through the rightful registration's own URLs nor receives them: the LMS answers only the redirect URI configured for it", async () => {
  const [a, b] = await Promise.all([createTenant(), createTenant()]);
  // The LMS exists first; B registers its pair and deployment before A does, pointing at the LMS's real
  // login endpoint and key set (a genuine id_token of the LMS would verify against B's registration).
  const platform = platformSimulator();
  const clientId = `client-${crypto.randomUUID()}`;
  const urls = await platform.configure({ client_id: clientId });
  const deploymentId = `dep-${crypto.randomUUID()}`;
  const registration = (admin: TestUser, name: string) =>
    callJson("/api/integrations/lti-consumers", {
      token: admin.token,
      body: {
        name,
        issuer: urls.issuer,
        client_id: clientId,
        deployment_ids: [deploymentId],
        auth_login_url: urls.auth_login_url,
        auth_token_url: urls.auth_token_url,
        jwks_url: urls.jwks_url,
      },
    });
  const early = await registration(b.admin, "Squatter");
  expect(early.res.status).toBe(201);
  const squatter = early.body;
  const rightful = await registration(a.admin, "Our LMS");
  expect(rightful.res.status).toBe(201);
  const consumer = rightful.body;
  expect(consumer.tool.redirect_uris).toEqual([`https://api.lingua.test/api/lti/callback/${consumer.id}`]);
  expect(consumer.tool.launch_url).toBe(consumer.tool.redirect_uris[0]);
  // The LMS's administrator configures A's tool URLs: its redirect URIs are the only ones it answers.
  await platform.configure({ redirect_uris: consumer.tool.redirect_uris });
  const reg: Registered = { platform, consumer, clientId, deploymentId, urls };
  const warn = vi.spyOn(console, "warn");

  // (1) A's launches through A's own login URL succeed and go to A, with or without the deployment id.
  for (const params of [{}, { lti_deployment_id: deploymentId }] as Record<string, string>[]) {
    const own = await launchThroughPlatform(reg, {
      params,
      claims: { [`${LTI}target_link_uri`]: consumer.tool.launch_url },
    });
    expect(own.started.res.status).toBe(302);
    expect(own.started.redirect!.searchParams.get("redirect_uri")).toBe(consumer.tool.redirect_uris[0]);
    expect(own.authorized?.status).toBe(200);
    expect(own.res?.status).toBe(200);
    expect(own.body.launch.consumer_id).toBe(consumer.id);
    expect(own.body.user.institution_id).toBe(a.institution.id);
  }
  expect(warn.mock.calls.some((call) => String(call[0]).includes("registration_ambiguous"))).toBe(false);
  warn.mockRestore();
  // A link to another registration's launch URL is not this registration's target.
  const foreign = await launchThroughPlatform(reg, {
    claims: { [`${LTI}target_link_uri`]: squatter.tool.launch_url },
  });
  expect(foreign.res?.status).toBe(400);
  expect(foreign.body).toMatchObject({ code: "lti_launch_refused", reason: "target_link_uri_foreign" });

  // (2) A link to B's login URL, followed by a browser signed in to the LMS: the LMS refuses B's
  // redirect URI, so no id_token is issued and nothing reaches B.
  const before = await written([squatter.id], [b.institution.id]);
  const sub = `user-${crypto.randomUUID()}`;
  const steered = await launchThroughPlatform(reg, { loginUrl: squatter.tool.login_url, claims: { sub } });
  expect(steered.started.res.status).toBe(302);
  expect(steered.started.redirect!.searchParams.get("redirect_uri")).toBe(squatter.tool.redirect_uris[0]);
  expect(steered.authorized).toMatchObject({ status: 400, body: { error: "invalid_request" } });
  expect(steered.res).toBeNull();
  expect(await written([squatter.id], [b.institution.id])).toEqual(before);
  expect(before).toEqual({ launches: 0, links: 0 });
  expect(await db().$count(ltiUserLinks, eq(ltiUserLinks.sub, sub))).toBe(0);
});

it("a state is redeemed only at the callback of the login that issued it: one bound to a registration not at another's or the shared one, one of the shared login not at a registration's", async () => {
  const [a, b] = await Promise.all([createTenant(), createTenant()]);
  const reg = await registerPlatform(a.admin);
  // B's registration of the same pair and deployment, pointing at the LMS's real key set.
  const copy = await registerCopy(reg, b.admin, [reg.deploymentId], {
    auth_login_url: reg.urls.auth_login_url,
    auth_token_url: reg.urls.auth_token_url,
    jwks_url: reg.urls.jwks_url,
  });
  const other = await registerPlatform(a.admin);
  const sub = `user-${crypto.randomUUID()}`;
  const stateCount = (state: string) =>
    db().$count(ltiStates, and(eq(ltiStates.state, state), isNull(ltiStates.usedAt)));
  const cases: [Registered, string, string][] = [
    // A state bound to B, posted (with the LMS's genuine id_token) to A's callback, and the reverse.
    [reg, copy.tool.login_url, reg.consumer.tool.redirect_uris[0]],
    [reg, reg.consumer.tool.login_url, copy.tool.redirect_uris[0]],
    // A bound state at the shared callback; a state of the shared login at a registration's callback.
    [reg, reg.consumer.tool.login_url, "/api/lti/callback"],
    [other, "/api/lti/login", other.consumer.tool.redirect_uris[0]],
  ];
  for (const [r, loginUrl, callback] of cases) {
    const started = await login(r, {}, undefined, loginUrl);
    expect(started.res.status).toBe(302);
    const idToken = await r.platform.idToken(launchClaims(r, started.nonce, { sub }));
    const res = await postCallback({ id_token: idToken, state: started.state }, { url: callback });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ code: "lti_launch_refused", reason: "state_wrong_callback" });
    expect(JSON.stringify(body)).not.toContain(a.institution.id);
    expect(JSON.stringify(body)).not.toContain(b.institution.id);
    // The state is not spent by a post to the wrong URL.
    expect(await stateCount(started.state)).toBe(1);
  }
  expect(await db().$count(ltiUserLinks, eq(ltiUserLinks.sub, sub))).toBe(0);
  expect(
    await written([reg.consumer.id, copy.id, other.consumer.id], [a.institution.id, b.institution.id]),
  ).toEqual({
    launches: 0,
    links: 0,
  });
});

it("with another institution holding the same pair and deployment, launches through the registration's own URLs still succeed and go to it; the shared URL refuses them as before", async () => {
  const [a, b] = await Promise.all([createTenant(), createTenant()]);
  const reg = await registerPlatform(a.admin);
  const attacker = platformSimulator();
  const lair = await attacker.configure({ client_id: reg.clientId });
  // B lists A's deployment (seen in a browser), with an attacker's key set and login endpoint.
  await registerCopy(reg, b.admin, [reg.deploymentId], {
    auth_login_url: lair.auth_login_url,
    auth_token_url: lair.auth_token_url,
    jwks_url: lair.jwks_url,
  });
  const warn = vi.spyOn(console, "warn");

  // A's LMS uses A's own URLs: the launch goes to A, with or without the deployment id.
  for (const params of [{}, { lti_deployment_id: reg.deploymentId }] as Record<string, string>[]) {
    const own = await launchThroughPlatform(reg, { params });
    expect(own.started.res.status).toBe(302);
    expect(own.started.redirect!.origin + own.started.redirect!.pathname).toBe(reg.urls.auth_login_url);
    expect(own.res?.status).toBe(200);
    expect(own.body.launch.consumer_id).toBe(reg.consumer.id);
    expect(own.body.user.institution_id).toBe(a.institution.id);
  }

  // The shared login URL (the fallback) cannot tell them apart: refused as before, saying nobody's name.
  const shared = await callJson(
    `/api/lti/login?${new URLSearchParams({ iss: reg.urls.issuer, client_id: reg.clientId, login_hint: "h", target_link_uri: CALLBACK_URL, lti_deployment_id: reg.deploymentId })}`,
    { headers: { Accept: "application/json" } },
  );
  expect(shared.res.status).toBe(400);
  expect(shared.body).toMatchObject({ code: "bad_request", reason: "registration_ambiguous" });
  expect(JSON.stringify(shared.body)).not.toContain(a.institution.id);

  // B's forged launch through A's login URL is checked against A's key set: refused, nothing provisioned.
  const sub = `user-${crypto.randomUUID()}`;
  const intoA = await launchVia(reg, reg.consumer.tool.login_url, attacker, { sub });
  expect(intoA.res?.status).toBe(400);
  expect(intoA.body).toMatchObject({ code: "lti_launch_refused", reason: "kid_unknown" });
  // C registers the pair and deployment with the LMS's real URLs and steers a login of the LMS to its
  // own login URL: the LMS refuses C's redirect URI, so no id_token reaches C.
  const c = await createTenant();
  const steering = await registerCopy(reg, c.admin, [reg.deploymentId], {
    auth_login_url: reg.urls.auth_login_url,
    auth_token_url: reg.urls.auth_token_url,
    jwks_url: reg.urls.jwks_url,
  });
  const steered = await launchThroughPlatform(reg, { loginUrl: steering.tool.login_url, claims: { sub } });
  expect(steered.authorized).toMatchObject({ status: 400, body: { error: "invalid_request" } });
  expect(steered.res).toBeNull();
  expect(await db().$count(ltiUserLinks, eq(ltiUserLinks.sub, sub))).toBe(0);
  const succeeded = await db().$count(
    ltiLaunches,
    and(
      eq(ltiLaunches.status, "succeeded"),
      inArray(ltiLaunches.institutionId, [b.institution.id, c.institution.id]),
    ),
  );
  expect(succeeded).toBe(0);
  const logged = warn.mock.calls
    .map((call) => String(call[0]))
    .filter((l) => l.includes("registration_ambiguous"));
  expect(logged.length).toBeGreaterThanOrEqual(1);
  warn.mockRestore();
});

it("a registration's own login URL takes only its issuer, client id and deployments; an unknown one is refused; nothing is stored", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const other = await registerPlatform(tenant.admin);
  const states = () =>
    db().$count(ltiStates, inArray(ltiStates.consumerId, [reg.consumer.id, other.consumer.id]));
  const cases: [string, Record<string, string>, RegExp][] = [
    [reg.consumer.tool.login_url, { iss: other.urls.issuer }, /issuer/],
    [reg.consumer.tool.login_url, { client_id: other.clientId }, /client id/],
    [reg.consumer.tool.login_url, { lti_deployment_id: other.deploymentId }, /deployment id/],
    ["/api/lti/login/ltc_nope", {}, /No LTI registration/],
  ];
  for (const [url, params, detail] of cases) {
    const query = new URLSearchParams({
      iss: reg.urls.issuer,
      client_id: reg.clientId,
      login_hint: "h",
      target_link_uri: CALLBACK_URL,
      ...params,
    });
    const { res, body } = await callJson(`${url}?${query}`, { headers: { Accept: "application/json" } });
    expect(res.status).toBe(400);
    expect(body.code).toBe("bad_request");
    expect(body.detail).toMatch(detail);
  }
  // A missing parameter is a 422 naming it.
  const missing = await callJson(
    `${reg.consumer.tool.login_url}?iss=${encodeURIComponent(reg.urls.issuer)}`,
    {
      headers: { Accept: "application/json" },
    },
  );
  expect(missing.res.status).toBe(422);
  expect(JSON.stringify(missing.body)).toContain("login_hint");
  expect(await states()).toBe(0);
  // Without client_id (optional in LTI), the registration the URL names is used; by form post too.
  const posted = await callJson(reg.consumer.tool.login_url, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
    rawBody: new URLSearchParams({
      iss: reg.urls.issuer,
      login_hint: "h",
      target_link_uri: CALLBACK_URL,
    }).toString(),
  });
  expect(posted.res.status).toBe(200);
  expect(new URL(posted.body.redirect_url).searchParams.get("client_id")).toBe(reg.clientId);
  expect(await states()).toBe(1);
});

it("a login through the shared URL without client_id, for an issuer with more than 100 registrations, asks for client_id instead of calling the deployment unknown", async () => {
  const tenant = await createTenant();
  const platform = platformSimulator();
  const urls = await platform.configure({ client_id: "bulk" });
  const now = new Date().toISOString();
  // 101 registrations of the issuer first (one statement each, D1 binds at most 100 values a
  // statement), the one the login is for after them.
  const [first, ...rest] = Array.from({ length: 101 }, (_, i) =>
    db()
      .insert(ltiConsumers)
      .values({
        id: `ltc_bulk_${i}_${crypto.randomUUID()}`,
        institutionId: tenant.institution.id,
        name: "Bulk",
        issuer: urls.issuer,
        clientId: `bulk-${i}-${crypto.randomUUID()}`,
        deploymentIds: ["dep-bulk"],
        authLoginUrl: urls.auth_login_url,
        authTokenUrl: urls.auth_token_url,
        jwksUrl: urls.jwks_url,
        createdAt: now,
        updatedAt: now,
      }),
  );
  await db().batch([first!, ...rest]);
  const { res: created, body: consumer } = await callJson("/api/integrations/lti-consumers", {
    token: tenant.admin.token,
    body: {
      name: "Last",
      issuer: urls.issuer,
      client_id: "the-one",
      deployment_ids: ["dep-last"],
      auth_login_url: urls.auth_login_url,
      auth_token_url: urls.auth_token_url,
      jwks_url: urls.jwks_url,
    },
  });
  expect(created.status).toBe(201);
  const query = {
    iss: urls.issuer,
    login_hint: "h",
    target_link_uri: CALLBACK_URL,
    lti_deployment_id: "dep-last",
  };
  const { res, body } = await callJson(`/api/lti/login?${new URLSearchParams(query)}`, {
    headers: { Accept: "application/json" },
  });
  expect(res.status).toBe(400);
  expect(body.detail).toContain("client_id");
  expect(body.detail).not.toContain("not registered");
  // With client_id the login is found, and through the registration's own URL it needs none.
  const withClient = await callJson(
    `/api/lti/login?${new URLSearchParams({ ...query, client_id: "the-one" })}`,
    {
      headers: { Accept: "application/json" },
    },
  );
  expect(withClient.res.status).toBe(200);
  const own = await callJson(`${consumer.tool.login_url}?${new URLSearchParams(query)}`, {
    headers: { Accept: "application/json" },
  });
  expect(own.res.status).toBe(200);
});
