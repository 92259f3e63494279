import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { expect, it } from "vitest";
import { ltiKeys, ltiLaunches, ltiPassbacks } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createTenant, mintToken } from "../helpers/tenants";
import { runQueue, waitUntil } from "../webhooks/support";
import { AGS_CLAIM, forgetTokens, launch, registerPlatform, SCORE_SCOPE } from "./support";

async function gradableLaunch(overrides: Record<string, unknown> = {}) {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  const launched = await launch(reg, overrides);
  if (launched.res.status !== 200) throw new Error(JSON.stringify(launched.body));
  return { tenant, reg, launch: launched.body.launch, user: launched.body.user };
}

function grade(token: string, launchId: string, body: Record<string, unknown>) {
  return callJson(`/api/lti/grade-passback/${launchId}`, { token, body });
}

it("sends the score with a verifiable client assertion and the exact AGS body", async () => {
  const { tenant, reg, launch: l } = await gradableLaunch();
  const { res, body } = await grade(tenant.admin.token, l.id, {
    score_given: 8.5,
    score_maximum: 10,
    comment: "Well done",
  });
  expect(res.status).toBe(200);
  expect(body).toMatchObject({
    id: expect.stringMatching(/^lpb_/),
    launch_id: l.id,
    source: "manual",
    status: "succeeded",
    score_given: 8.5,
    score_maximum: 10,
    activity_progress: "Completed",
    grading_progress: "FullyGraded",
    comment: "Well done",
    platform_status: 200,
    attempt_count: 1,
    sent_at: expect.any(String),
  });

  const state = await reg.platform.state();
  expect(state.token_requests).toHaveLength(1);
  const [token] = state.token_requests;
  const { keys } = (await callJson(reg.consumer.tool.jwks_url)).body;
  expect(token).toMatchObject({
    grant_type: "client_credentials",
    client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    scope: SCORE_SCOPE,
    assertion_valid: true,
    assertion_header: { alg: "RS256", kid: keys[0].kid },
    assertion_claims: {
      iss: reg.clientId,
      sub: reg.clientId,
      aud: reg.urls.auth_token_url,
      jti: expect.any(String),
    },
  });
  expect(token!.assertion_claims!.exp as number).toBeGreaterThan(token!.assertion_claims!.iat as number);

  expect(state.score_requests).toHaveLength(1);
  const [score] = state.score_requests;
  expect(score).toMatchObject({
    method: "POST",
    path: `/p/${reg.platform.name}/lineitems/li-1/scores`,
    search: "",
    content_type: "application/vnd.ims.lis.v1.score+json",
    token_known: true,
  });
  expect(score!.body).toEqual({
    userId: l.sub,
    scoreGiven: 8.5,
    scoreMaximum: 10,
    activityProgress: "Completed",
    gradingProgress: "FullyGraded",
    timestamp: body.timestamp,
    comment: "Well done",
  });
  expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const logged = await callJson(`/api/integrations/lti-launches/${l.id}`, { token: tenant.admin.token });
  expect(logged.body.passbacks).toEqual([body]);
});

it("inserts /scores before a line item's query string, and reuses the access token", async () => {
  const { tenant, reg, launch: l } = await gradableLaunch();
  const lineitem = `${reg.urls.lineitems}/li-2?type_id=7&x=a%20b`;
  const second = await launch(reg, {
    [AGS_CLAIM]: { scope: [SCORE_SCOPE], lineitems: reg.urls.lineitems, lineitem },
  });
  const a = await grade(tenant.admin.token, second.body.launch.id, {
    score_given: 1,
    score_maximum: 2,
    activity_progress: "Submitted",
    grading_progress: "Pending",
  });
  expect(a.res.status).toBe(200);
  const b = await grade(tenant.admin.token, l.id, { score_given: 2, score_maximum: 2 });
  expect(b.res.status).toBe(200);
  const state = await reg.platform.state();
  expect(state.score_requests[0]).toMatchObject({
    path: `/p/${reg.platform.name}/lineitems/li-2/scores`,
    search: "?type_id=7&x=a%20b",
  });
  expect(state.score_requests[0]!.body).toMatchObject({
    activityProgress: "Submitted",
    gradingProgress: "Pending",
  });
  expect(state.score_requests[0]!.body).not.toHaveProperty("comment");
  expect(state.token_requests).toHaveLength(1);
  expect(state.score_requests.every((r) => r.token_known)).toBe(true);
});

it("a platform failure is 202, retried through the queue with backoff, then succeeds", async () => {
  const { tenant, reg, launch: l } = await gradableLaunch();
  await reg.platform.scores([{ status: 503 }, { status: 500 }]);
  const { res, body } = await grade(tenant.admin.token, l.id, { score_given: 3, score_maximum: 4 });
  expect(res.status).toBe(202);
  expect(body).toMatchObject({ status: "retrying", platform_status: 503, attempt_count: 1, sent_at: null });
  // The queue's delayed messages (about a second apart in tests) do the rest.
  const done = await waitUntil(async () => {
    const { body: launch } = await callJson(`/api/integrations/lti-launches/${l.id}`, {
      token: tenant.admin.token,
    });
    return launch.passbacks[0].status === "succeeded" ? launch.passbacks[0] : null;
  });
  expect(done).toMatchObject({ attempt_count: 3, platform_status: 200 });
  const scores = (await reg.platform.state()).score_requests;
  expect(scores.map((s) => s.status)).toEqual([503, 500, 200]);
  // Every retry sends the same score.
  expect(new Set(scores.map((s) => JSON.stringify(s.body))).size).toBe(1);
  // A message delivered again once it succeeded is acknowledged, not sent.
  const late = await runQueue("lingua-lti-passbacks", [{ passback_id: body.id }, { passback_id: body.id }]);
  expect(late.explicitAcks).toHaveLength(2);
  expect((await reg.platform.state()).score_requests).toHaveLength(3);
});

it("a 4xx of the platform is 502 lti_platform_rejected with its status and answer", async () => {
  const { tenant, reg, launch: l } = await gradableLaunch();
  await reg.platform.scores([{ status: 422, body: `{"error":"score out of range"}${"x".repeat(2000)}` }]);
  const { res, body } = await grade(tenant.admin.token, l.id, { score_given: 30, score_maximum: 4 });
  expect(res.status).toBe(502);
  expect(body).toMatchObject({
    code: "lti_platform_rejected",
    platform_status: 422,
    passback_id: expect.any(String),
  });
  expect(body.platform_body.startsWith('{"error":"score out of range"}')).toBe(true);
  expect(body.platform_body.length).toBe(1024);
  const logged = await callJson(`/api/integrations/lti-launches/${l.id}`, { token: tenant.admin.token });
  expect(logged.body.passbacks[0]).toMatchObject({ status: "failed", platform_status: 422 });
});

it("refuses launches without a line item or the score scope (409), other institutions' (404), and checks input", async () => {
  const { tenant, reg } = await gradableLaunch();
  const noAgs = await launch(reg, { [AGS_CLAIM]: undefined });
  const noScope = await launch(reg, {
    [AGS_CLAIM]: {
      scope: ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"],
      lineitem: `${reg.urls.lineitems}/li-1`,
    },
  });
  for (const l of [noAgs, noScope]) {
    const { res, body } = await grade(tenant.admin.token, l.body.launch.id, {
      score_given: 1,
      score_maximum: 1,
    });
    expect(res.status).toBe(409);
    expect(body.code).toBe("lti_not_gradable");
  }
  const other = await createTenant();
  const foreign = await grade(other.admin.token, noAgs.body.launch.id, { score_given: 1, score_maximum: 1 });
  expect(foreign.res.status).toBe(404);
  const bad = await grade(tenant.admin.token, noAgs.body.launch.id, {
    score_given: -1,
    score_maximum: 0,
    activity_progress: "Done",
  });
  expect(bad.res.status).toBe(422);
  expect(bad.body.errors.map((e: any) => e.path)).toEqual([
    "score_given",
    "score_maximum",
    "activity_progress",
  ]);
  const reader = await mintToken(tenant.admin, ["lti:read"]);
  const denied = await grade(reader.token, noAgs.body.launch.id, { score_given: 1, score_maximum: 1 });
  expect(denied.res.status).toBe(403);
  expect((await reg.platform.state()).score_requests).toHaveLength(0);
});

it("after a key rotation the new key signs and the old one still verifies", async () => {
  const { tenant, reg, launch: l } = await gradableLaunch();
  expect((await grade(tenant.admin.token, l.id, { score_given: 1, score_maximum: 1 })).res.status).toBe(200);
  const rotated = await callJson(`/api/integrations/lti-consumers/${reg.consumer.id}/keys/rotate`, {
    token: tenant.admin.token,
    method: "POST",
  });
  expect(rotated.res.status).toBe(200);
  await forgetTokens();
  await reg.platform.learnToolKeys();
  expect((await grade(tenant.admin.token, l.id, { score_given: 1, score_maximum: 1 })).res.status).toBe(200);
  const [before, after] = (await reg.platform.state()).token_requests;
  expect(after!.assertion_valid).toBe(true);
  expect(decodeProtectedHeader(after!.assertion!).kid).toBe(rotated.body.current_kid);
  // The assertion signed before the rotation verifies against today's key set.
  const jwks = createLocalJWKSet((await callJson(reg.consumer.tool.jwks_url)).body);
  const old = await jwtVerify(before!.assertion!, jwks, { algorithms: ["RS256"] });
  expect(old.protectedHeader.kid).toBe(rotated.body.retired_kid);
});

it("a launch whose line item is not an http(s) URL is accepted but not gradable (409), and nothing is sent", async () => {
  const { tenant, reg } = await gradableLaunch();
  for (const lineitem of ["not a url", "javascript:alert(1)", "ftp://lms.example/li-1", 42]) {
    const launched = await launch(reg, {
      [AGS_CLAIM]: { scope: [SCORE_SCOPE], lineitems: "also not a url", lineitem },
    });
    expect(launched.res.status).toBe(200);
    expect(launched.body.launch.ags).toEqual({ scope: [SCORE_SCOPE] });
    const { res, body } = await grade(tenant.admin.token, launched.body.launch.id, {
      score_given: 1,
      score_maximum: 1,
    });
    expect(res.status).toBe(409);
    expect(body.code).toBe("lti_not_gradable");
    const rows = await database(env.DB).$count(
      ltiPassbacks,
      eq(ltiPassbacks.launchId, launched.body.launch.id),
    );
    expect(rows).toBe(0);
  }
  expect((await reg.platform.state()).score_requests).toHaveLength(0);
});

it("a stored launch whose line item does not parse: the manual grade is 409, a queued passback records a failed attempt", async () => {
  const { tenant, reg, launch: l } = await gradableLaunch();
  // A row stored before line items were checked at launch.
  const db = database(env.DB);
  const stored = await db
    .select({ ags: ltiLaunches.ags })
    .from(ltiLaunches)
    .where(eq(ltiLaunches.id, l.id))
    .get();
  await db
    .update(ltiLaunches)
    .set({ ags: { ...stored?.ags, lineitem: "not a url" } })
    .where(eq(ltiLaunches.id, l.id));
  const manual = await grade(tenant.admin.token, l.id, { score_given: 1, score_maximum: 1 });
  expect(manual.res.status).toBe(409);
  expect(manual.body.code).toBe("lti_not_gradable");

  const now = new Date().toISOString();
  await db.insert(ltiPassbacks).values({
    id: `lpb_bad_${l.id}`,
    launchId: l.id,
    institutionId: tenant.institution.id,
    eventId: "evt_stored",
    scoreFraction: 1,
    activityProgress: "Completed",
    gradingProgress: "FullyGraded",
    scoredAt: now,
    status: "pending",
    attemptCount: 0,
    createdAt: now,
  });
  const run = await runQueue("lingua-lti-passbacks", [{ passback_id: `lpb_bad_${l.id}` }]);
  expect(run.explicitAcks).toHaveLength(1);
  const { body } = await callJson(`/api/integrations/lti-launches/${l.id}`, { token: tenant.admin.token });
  expect(body.passbacks).toHaveLength(1);
  expect(body.passbacks[0]).toMatchObject({ status: "failed", attempt_count: 1, platform_status: null });
  expect(body.passbacks[0].last_error).toMatch(/line item/);
  expect(body.passbacks[0].last_error).not.toMatch(/TypeError|at /);
  expect((await reg.platform.state()).score_requests).toHaveLength(0);
});

it("an error while sending is a failed attempt, retried on the usual schedule, never a 500 or a stuck pending", async () => {
  const { tenant, reg, launch: l } = await gradableLaunch();
  // A signing key that no longer unseals (a rotated encryption key, a damaged row). (A cached access
  // token that no longer unseals is no error: the platform's token cache treats it as none.)
  const db = database(env.DB);
  const key = await db
    .select({ id: ltiKeys.id, sealed: ltiKeys.privateKeySealed })
    .from(ltiKeys)
    .where(eq(ltiKeys.consumerId, reg.consumer.id))
    .get();
  await db.update(ltiKeys).set({ privateKeySealed: "damaged" }).where(eq(ltiKeys.id, key!.id));
  const { res, body } = await grade(tenant.admin.token, l.id, { score_given: 1, score_maximum: 2 });
  expect(res.status).toBe(202);
  expect(body).toMatchObject({ status: "retrying", attempt_count: 1, platform_status: null });
  expect(body.last_error).toBe("Internal error while sending the score; it will be retried");
  await db.update(ltiKeys).set({ privateKeySealed: key!.sealed }).where(eq(ltiKeys.id, key!.id));
  const done = await waitUntil(async () => {
    const { body: launch } = await callJson(`/api/integrations/lti-launches/${l.id}`, {
      token: tenant.admin.token,
    });
    return launch.passbacks[0].status === "succeeded" ? launch.passbacks[0] : null;
  });
  expect(done).toMatchObject({ attempt_count: 2, platform_status: 200 });
  expect((await reg.platform.state()).score_requests).toHaveLength(1);
});
