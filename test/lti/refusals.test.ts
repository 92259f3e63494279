import { env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { expect, it } from "vitest";
import { apiTokens, ltiConsumers, ltiLaunches, ltiStates, ltiUserLinks, users } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createTenant, type Tenant } from "../helpers/tenants";
import { LTI, launch, launchClaims, login, postCallback, type Registered, registerPlatform } from "./support";

async function counts(institutionId: string) {
  const db = database(env.DB);
  const registrations = db
    .select({ id: ltiConsumers.id })
    .from(ltiConsumers)
    .where(eq(ltiConsumers.institutionId, institutionId));
  return {
    users: await db.$count(users, eq(users.institutionId, institutionId)),
    links: await db.$count(ltiUserLinks, inArray(ltiUserLinks.consumerId, registrations)),
    tokens: await db.$count(apiTokens, eq(apiTokens.institutionId, institutionId)),
  };
}

/** Posts a launch built by `build`, expects a refusal with `reason`, and that only the log recorded it. */
async function expectRefused(
  tenant: Tenant,
  reg: Registered,
  reason: string,
  build: (nonce: string) => Promise<{ id_token?: string; state?: string } | Record<string, string>>,
  status = 400,
) {
  const before = await counts(tenant.institution.id);
  const { state, nonce } = await login(reg);
  const form = { state, ...(await build(nonce)) } as Record<string, string>;
  const res = await postCallback(form);
  const body = (await res.json()) as any;
  expect(res.status, `${reason}: ${JSON.stringify(body)}`).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/problem+json");
  expect(body.reason).toBe(reason);
  expect(body.detail.length).toBeGreaterThan(10);
  expect(await counts(tenant.institution.id)).toEqual(before);
  const logged = await callJson(`/api/integrations/lti-launches/${body.launch_id}`, {
    token: tenant.admin.token,
  });
  expect(logged.res.status).toBe(200);
  expect(logged.body).toMatchObject({
    status: "failed",
    failure_reason: reason,
    failure_detail: body.detail,
    consumer_id: reg.consumer.id,
    user_id: null,
    passbacks: [],
  });
  return body;
}

it("refuses each forged, stale or misaddressed id_token and records only the log entry", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const sign = (nonce: string, overrides: Record<string, unknown> = {}, mode = "rs256") =>
    reg.platform.idToken(launchClaims(reg, nonce, overrides), mode).then((id_token) => ({ id_token }));
  const now = Math.floor(Date.now() / 1000);

  await expectRefused(tenant, reg, "alg_not_allowed", (n) => sign(n, {}, "none"));
  await expectRefused(tenant, reg, "alg_not_allowed", (n) => sign(n, {}, "hs256-public"));
  await expectRefused(tenant, reg, "kid_unknown", (n) => sign(n, {}, "unknown-key"));
  await expectRefused(tenant, reg, "signature_invalid", (n) => sign(n, {}, "wrong-signature"));
  await expectRefused(tenant, reg, "issuer_mismatch", (n) => sign(n, { iss: "https://other.example" }));
  await expectRefused(tenant, reg, "audience_mismatch", (n) => sign(n, { aud: "someone-else" }));
  await expectRefused(tenant, reg, "azp_mismatch", (n) => sign(n, { aud: [reg.clientId, "other"] }));
  await expectRefused(tenant, reg, "azp_mismatch", (n) =>
    sign(n, { aud: [reg.clientId, "other"], azp: "other" }),
  );
  await expectRefused(tenant, reg, "token_expired", (n) => sign(n, { iat: now - 600, exp: now - 120 }));
  await expectRefused(tenant, reg, "token_not_yet_valid", (n) => sign(n, { iat: now + 600, exp: now + 900 }));
  await expectRefused(tenant, reg, "nonce_mismatch", () => sign("another-nonce"));
  await expectRefused(tenant, reg, "deployment_unknown", (n) =>
    sign(n, { [`${LTI}deployment_id`]: "dep-x" }),
  );
  await expectRefused(tenant, reg, "version_unsupported", (n) => sign(n, { [`${LTI}version`]: "1.1" }));
  const unsupported = await expectRefused(tenant, reg, "message_type_unsupported", (n) =>
    sign(n, { [`${LTI}message_type`]: "LtiSubmissionReviewRequest" }),
  );
  expect(unsupported.code).toBe("lti_launch_refused");
  for (const claim of ["sub", `${LTI}roles`, `${LTI}resource_link`]) {
    const missing = await expectRefused(tenant, reg, "claim_missing", (n) => sign(n, { [claim]: undefined }));
    expect(missing.detail).toContain(claim === "sub" ? "sub" : claim);
  }
  await expectRefused(tenant, reg, "target_link_uri_foreign", (n) =>
    sign(n, { [`${LTI}target_link_uri`]: "https://evil.example/api/lti/callback" }),
  );
  await expectRefused(tenant, reg, "id_token_missing", async () => ({}));
  await expectRefused(tenant, reg, "platform_error", async () => ({
    error: "login_required",
    error_description: "Not signed in",
  }));
});

it("a replayed id_token is refused, with its own state and with a new one", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const first = await launch(reg);
  expect(first.res.status).toBe(200);
  const replayed = await postCallback({ id_token: first.idToken, state: first.state });
  expect(((await replayed.json()) as any).reason).toBe("state_used");
  await expectRefused(tenant, reg, "nonce_mismatch", async () => ({ id_token: first.idToken }));
});

it("an unknown state is refused and logged without an institution", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { nonce } = await login(reg);
  const idToken = await reg.platform.idToken(launchClaims(reg, nonce));
  const res = await postCallback({ id_token: idToken, state: "made-up" });
  const body = (await res.json()) as any;
  expect(res.status).toBe(400);
  expect(body.reason).toBe("state_unknown");
  const row = await database(env.DB)
    .select({ institution_id: ltiLaunches.institutionId, status: ltiLaunches.status })
    .from(ltiLaunches)
    .where(eq(ltiLaunches.id, body.launch_id))
    .get();
  expect(row).toEqual({ institution_id: null, status: "failed" });
  const list = await callJson("/api/integrations/lti-launches", { token: tenant.admin.token });
  expect(list.body.data.map((l: any) => l.id)).not.toContain(body.launch_id);
});

it("an expired state is refused", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await expectRefused(tenant, reg, "state_expired", async (nonce) => {
    await database(env.DB)
      .update(ltiStates)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(ltiStates.nonce, nonce));
    return { id_token: await reg.platform.idToken(launchClaims(reg, nonce)) };
  });
});

it("a browser sees a readable page for a refused launch", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { state, nonce } = await login(reg);
  const idToken = await reg.platform.idToken(launchClaims(reg, nonce, { [`${LTI}deployment_id`]: "dep-x" }));
  const res = await postCallback({ id_token: idToken, state }, { json: false });
  expect(res.status).toBe(400);
  expect(res.headers.get("Content-Type")).toContain("text/html");
  expect(res.headers.get("Content-Security-Policy")).toContain("frame-ancestors *");
  expect(res.headers.get("X-Frame-Options")).toBeNull();
  const page = await res.text();
  expect(page).toContain("deployment_unknown");
  expect(page).toContain("&quot;dep-x&quot;");
});

it("the platform's key set is fetched once, cached, and fetched again for a new kid", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  expect((await launch(reg)).res.status).toBe(200);
  expect((await launch(reg)).res.status).toBe(200);
  expect((await reg.platform.state()).jwks_fetches).toBe(1);
  await reg.platform.rotate();
  expect((await launch(reg)).res.status).toBe(200);
  expect((await reg.platform.state()).jwks_fetches).toBe(2);
  // A kid nobody publishes refetches at most once in a while (the rotation's refetch was just now),
  // not once per forged token.
  await expectRefused(tenant, reg, "kid_unknown", (n) =>
    reg.platform.idToken(launchClaims(reg, n), "unknown-key").then((id_token) => ({ id_token })),
  );
  await expectRefused(tenant, reg, "kid_unknown", (n) =>
    reg.platform.idToken(launchClaims(reg, n), "unknown-key").then((id_token) => ({ id_token })),
  );
  expect((await reg.platform.state()).jwks_fetches).toBe(2);
});

it("the launch log lists launches newest first with filters, only the institution's own", async () => {
  const [tenant, other] = await Promise.all([createTenant(), createTenant()]);
  const reg = await registerPlatform(tenant.admin);
  const ok = await launch(reg);
  const bad = await launch(reg, { [`${LTI}version`]: "2.0" });
  const all = await callJson("/api/integrations/lti-launches", { token: tenant.admin.token });
  expect(all.body.data.map((l: any) => l.id)).toEqual([bad.body.launch_id, ok.body.launch.id]);
  const failed = await callJson("/api/integrations/lti-launches?status=failed", {
    token: tenant.admin.token,
  });
  expect(failed.body.data.map((l: any) => l.id)).toEqual([bad.body.launch_id]);
  const byUser = await callJson(`/api/integrations/lti-launches?user_id=${ok.body.user.id}`, {
    token: tenant.admin.token,
  });
  expect(byUser.body.data.map((l: any) => l.id)).toEqual([ok.body.launch.id]);
  const byConsumer = await callJson(
    `/api/integrations/lti-launches?consumer_id=${reg.consumer.id}&per_page=1`,
    {
      token: tenant.admin.token,
    },
  );
  expect(byConsumer.body.meta).toMatchObject({ total: 2, last_page: 2 });
  expect(byConsumer.body.links.next).toContain(`consumer_id=${reg.consumer.id}`);
  const typo = await callJson("/api/integrations/lti-launches?consumer=x", { token: tenant.admin.token });
  expect(typo.res.status).toBe(422);

  expect((await callJson("/api/integrations/lti-launches", { token: other.admin.token })).body.data).toEqual(
    [],
  );
  const foreign = await callJson(`/api/integrations/lti-launches/${ok.body.launch.id}`, {
    token: other.admin.token,
  });
  expect(foreign.res.status).toBe(404);
});
