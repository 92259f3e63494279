import { env } from "cloudflare:test";
import { and, eq, inArray, or } from "drizzle-orm";
import { expect, it, vi } from "vitest";
import {
  apiTokens,
  courses,
  institutions,
  lessons,
  ltiConsumers,
  ltiLaunches,
  ltiStates,
  ltiUserLinks,
  outboxEvents,
  users,
} from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant, type TestUser } from "../helpers/tenants";
import {
  AGS_CLAIM,
  CALLBACK_URL,
  INSTRUCTOR_ROLE,
  LTI,
  launch,
  launchClaims,
  login,
  postCallback,
  type Registered,
  registerPlatform,
} from "./support";

const db = () => database(env.DB);

it("login redirects to the platform with every OIDC parameter and a partitioned state cookie", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { res, redirect, state, nonce, cookie } = await login(reg);
  expect(res.status).toBe(302);
  expect(`${redirect!.origin}${redirect!.pathname}`).toBe(reg.urls.auth_login_url);
  expect(Object.fromEntries(redirect!.searchParams)).toEqual({
    scope: "openid",
    response_type: "id_token",
    response_mode: "form_post",
    prompt: "none",
    client_id: reg.clientId,
    redirect_uri: CALLBACK_URL,
    login_hint: "hint-42",
    lti_message_hint: "msg-hint",
    state,
    nonce,
  });
  expect(state.length).toBeGreaterThanOrEqual(43);
  expect(nonce).not.toBe(state);
  expect(cookie).toMatch(new RegExp(`^lti_state_${state}=[\\w-]+;`));
  for (const attribute of [
    "Secure",
    "HttpOnly",
    "SameSite=None",
    "Partitioned",
    "Max-Age=600",
    "Path=/api/lti",
  ])
    expect(cookie).toContain(attribute);

  // A form post does the same.
  const posted = await call("/api/lti/login", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    rawBody: new URLSearchParams({
      iss: reg.urls.issuer,
      login_hint: "h",
      target_link_uri: CALLBACK_URL,
    }).toString(),
  });
  expect(posted.status).toBe(302);
  expect(new URL(posted.headers.get("Location")!).searchParams.get("lti_message_hint")).toBeNull();
});

it("login refuses an unknown platform, a foreign target, an unknown deployment and an ambiguous issuer", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const json = { Accept: "application/json" };
  const ask = (params: Record<string, string>) => {
    const q = new URLSearchParams({
      iss: reg.urls.issuer,
      login_hint: "h",
      target_link_uri: CALLBACK_URL,
      ...params,
    });
    return callJson(`/api/lti/login?${q}`, { headers: json });
  };
  const unknown = await ask({ iss: "https://nobody.example" });
  expect(unknown.res.status).toBe(400);
  expect(unknown.body.detail).toContain("No LTI registration");
  expect((await ask({ target_link_uri: "https://evil.example/api/lti/callback" })).res.status).toBe(400);
  expect((await ask({ lti_deployment_id: "nope" })).res.status).toBe(400);
  const missing = await callJson("/api/lti/login?iss=x", { headers: json });
  expect(missing.res.status).toBe(422);

  // A second registration under the same issuer: the login must name its client id.
  await callJson("/api/integrations/lti-consumers", {
    token: tenant.admin.token,
    body: {
      ...reg.consumer,
      id: undefined,
      institution_id: undefined,
      tool: undefined,
      created_at: undefined,
      updated_at: undefined,
      client_id: "second",
    },
  });
  const ambiguous = await ask({});
  expect(ambiguous.res.status).toBe(400);
  expect(ambiguous.body.detail).toContain("client_id");
  // A JSON client gets the redirect as data.
  const named = await ask({ client_id: reg.clientId });
  expect(named.res.status).toBe(200);
  expect(new URL(named.body.redirect_url).searchParams.get("client_id")).toBe(reg.clientId);
  expect(named.res.headers.get("Set-Cookie")).toContain("Partitioned");

  // Browsers get a page.
  const page = await call(
    `/api/lti/login?iss=https://nobody.example&login_hint=h&target_link_uri=${CALLBACK_URL}`,
  );
  expect(page.status).toBe(400);
  expect(page.headers.get("Content-Type")).toContain("text/html");
  expect(await page.text()).toContain("No LTI registration");
});

it("a launch creates the member, records the launch and answers a session with the role's abilities", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 });
  const sub = `user-${crypto.randomUUID()}`;
  const { res, body } = await launch(reg, {
    sub,
    [`${LTI}custom`]: { lingua_course_id: course.courseId, section: "A" },
  });
  expect(res.status).toBe(200);
  expect(body.launch).toMatchObject({
    id: expect.stringMatching(/^lti_/),
    status: "succeeded",
    failure_reason: null,
    consumer_id: reg.consumer.id,
    deployment_id: reg.deploymentId,
    message_type: "LtiResourceLinkRequest",
    sub,
    user_id: body.user.id,
    roles: ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
    context: { id: "ctx-1", label: "SPAN101", title: "Spanish for beginners" },
    resource_link: { id: "rl-1", title: "Week 1: greetings" },
    custom: { lingua_course_id: course.courseId, section: "A" },
    target: { type: "course", id: course.courseId, title: expect.any(String) },
    ags: { lineitem: `${reg.urls.lineitems}/li-1`, lineitems: reg.urls.lineitems, scope: expect.any(Array) },
  });
  expect(body.user).toMatchObject({
    name: "Ada Lovelace",
    role: "learner",
    institution_id: tenant.institution.id,
  });
  expect(body.user.email).toMatch(/^ada\./);
  expect(Date.parse(body.session.expires_at) - Date.now()).toBeGreaterThan(8 * 3_600_000 - 120_000);
  expect(Date.parse(body.session.expires_at) - Date.now()).toBeLessThanOrEqual(8 * 3_600_000);
  const me = await callJson("/api/auth/me", { token: body.session.token });
  expect(me.body.user.id).toBe(body.user.id);
  expect(me.body.token.abilities).toEqual(["tokens:read", "content:read", "progress:read", "progress:write"]);

  // The same person again: the same user; an instructor launch raises the role.
  const again = await launch(reg, { sub, name: "Ada King", [`${LTI}roles`]: [INSTRUCTOR_ROLE] });
  expect(again.body.user).toMatchObject({ id: body.user.id, name: "Ada King", role: "instructor" });
  expect(await db().$count(ltiUserLinks, eq(ltiUserLinks.consumerId, reg.consumer.id))).toBe(1);
});

it("a target_link_uri with ?lesson= chooses the lesson; an unknown one refuses the launch", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 });
  const lessonId = course.lessons[0]!.id;
  const ok = await launch(reg, { [`${LTI}target_link_uri`]: `${CALLBACK_URL}?lesson=${lessonId}` });
  expect(ok.body.launch.target).toMatchObject({ type: "lesson", id: lessonId });
  const bad = await launch(reg, { [`${LTI}target_link_uri`]: `${CALLBACK_URL}?course=crs_missing` });
  expect(bad.res.status).toBe(400);
  expect(bad.body.reason).toBe("target_unknown");
});

it("a browser is sent to the app with a single-use code, exchanged for the session", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { state, nonce, cookie } = await login(reg);
  const idToken = await reg.platform.idToken(launchClaims(reg, nonce));
  const stateCookie = cookie!.split(";")[0]!;
  const res = await postCallback({ id_token: idToken, state }, { json: false, cookie: stateCookie });
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get("Location")!);
  expect(`${location.origin}${location.pathname}`).toBe("https://api.lingua.test/api/lti/app");
  expect(location.search).toBe("");
  const code = new URLSearchParams(location.hash.slice(1)).get("code")!;
  expect(code.length).toBeGreaterThan(40);
  expect(res.headers.get("Set-Cookie")).toContain("Max-Age=0");

  const exchanged = await callJson("/api/lti/session", { body: { code } });
  expect(exchanged.res.status).toBe(200);
  expect(exchanged.body.launch.status).toBe("succeeded");
  expect(exchanged.body.user.role).toBe("learner");
  expect((await callJson("/api/auth/me", { token: exchanged.body.session.token })).res.status).toBe(200);
  const twice = await callJson("/api/lti/session", { body: { code } });
  expect(twice.res.status).toBe(401);

  const page = await call("/api/lti/app");
  expect(page.status).toBe(200);
  expect(page.headers.get("Content-Security-Policy")).toContain("frame-ancestors *");
  expect(page.headers.get("X-Frame-Options")).toBeNull();
  expect(await page.text()).toContain("/api/lti/session");
});

it("LTI_APP_URL sends browsers to the integrator's app", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { state, nonce, cookie } = await login(reg);
  const idToken = await reg.platform.idToken(launchClaims(reg, nonce));
  const res = await call("/api/lti/callback", {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Accept: "text/html",
      Cookie: cookie!.split(";")[0]!,
    },
    rawBody: new URLSearchParams({ id_token: idToken, state }).toString(),
    env: { LTI_APP_URL: "https://learn.acme.example/lti" as "" },
  });
  expect(res.status).toBe(303);
  expect(res.headers.get("Location")).toMatch(/^https:\/\/learn\.acme\.example\/lti#code=/);
});

it("a state cookie that does not match refuses the launch; so does none at all (login CSRF)", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { state, nonce } = await login(reg);
  const idToken = await reg.platform.idToken(launchClaims(reg, nonce));
  const res = await postCallback({ id_token: idToken, state }, { cookie: `lti_state_${state}=forged` });
  expect(res.status).toBe(400);
  expect(((await res.json()) as any).reason).toBe("state_cookie_mismatch");
  // The platform's genuine post, carried to a browser that did not start the login.
  const other = await login(reg);
  const forged = await reg.platform.idToken(launchClaims(reg, other.nonce));
  const unbound = await postCallback({ id_token: forged, state: other.state }, { cookie: false });
  expect(unbound.status).toBe(400);
  expect(((await unbound.json()) as any).reason).toBe("browser_binding_missing");
  const fine = await launch(reg);
  expect(fine.res.status).toBe(200);
  expect(fine.body.launch[AGS_CLAIM]).toBeUndefined();
});

it("login, callback and session exchange share a per-IP limit", async () => {
  const ip = `203.0.113.${Math.floor(Math.random() * 250)}-${crypto.randomUUID()}`;
  const headers = { "CF-Connecting-IP": ip, Accept: "application/json" };
  const statuses: number[] = [];
  for (let i = 0; i < 120; i++)
    statuses.push(
      (await call("/api/lti/login?iss=https://nobody.example&login_hint=h&target_link_uri=x", { headers }))
        .status,
    );
  expect(new Set(statuses)).toEqual(new Set([400]));
  const limited = await callJson("/api/lti/session", { headers, body: { code: "x" } });
  expect(limited.res.status).toBe(429);
  expect(limited.body.code).toBe("rate_limited");
  expect(Number(limited.res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
});

it("two first launches of one person at once end with one user", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const sub = `user-${crypto.randomUUID()}`;
  const [a, b] = await Promise.all([login(reg), login(reg)]);
  const [ta, tb] = await Promise.all([
    reg.platform.idToken(launchClaims(reg, a.nonce, { sub })),
    reg.platform.idToken(launchClaims(reg, b.nonce, { sub })),
  ]);
  const [ra, rb] = await Promise.all([
    postCallback({ id_token: ta, state: a.state }),
    postCallback({ id_token: tb, state: b.state }),
  ]);
  const [ba, bb] = (await Promise.all([ra.json(), rb.json()])) as any[];
  expect([ra.status, rb.status]).toEqual([200, 200]);
  expect(ba.user.id).toBe(bb.user.id);
  // admin, instructor, learner, and the one launched
  expect(await db().$count(users, eq(users.institutionId, tenant.institution.id))).toBe(4);
});

it("a launch creates a member that takes a seat (member.created), and refuses suspended members and full institutions", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const sub = `user-${crypto.randomUUID()}`;
  const first = await launch(reg, { sub });
  expect(first.res.status).toBe(200);
  const event = await db()
    .select({ payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(and(eq(outboxEvents.userId, first.body.user.id), eq(outboxEvents.type, "member.created")))
    .get();
  expect(event?.payload).toMatchObject({
    user_id: first.body.user.id,
    status: "active",
    role: "learner",
  });

  await db().update(users).set({ status: "suspended" }).where(eq(users.id, first.body.user.id));
  const suspended = await launch(reg, { sub });
  expect(suspended.res.status).toBe(400);
  expect(suspended.body.reason).toBe("member_suspended");

  // Every seat taken (admin, instructor, learner: three active members).
  await db().update(institutions).set({ seats: 3 }).where(eq(institutions.id, tenant.institution.id));
  const full = await launch(reg);
  expect(full.res.status).toBe(400);
  expect(full.body.reason).toBe("seats_exhausted");
  expect(await db().$count(users, eq(users.institutionId, tenant.institution.id))).toBe(4);
});

it("a launch session cannot mint API tokens (403 naming tokens:write), as learner or instructor", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  for (const roles of [["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"], [INSTRUCTOR_ROLE]]) {
    const { res, body } = await launch(reg, { [`${LTI}roles`]: roles });
    expect(res.status).toBe(200);
    const me = await callJson("/api/auth/me", { token: body.session.token });
    expect(me.body.token.abilities).not.toContain("tokens:write");
    const minted = await callJson("/api/integrations/tokens", {
      token: body.session.token,
      body: { name: "forever", abilities: ["content:read"] },
    });
    expect(minted.res.status).toBe(403);
    expect(minted.body.code).toBe("missing_ability");
    expect(minted.body.detail).toContain("tokens:write");
    const count = await db().$count(
      apiTokens,
      and(eq(apiTokens.userId, body.user.id), eq(apiTokens.kind, "api")),
    );
    expect(count).toBe(0);
  }
});

it("a launch session signs out by revoking itself (204, then 401) without tokens:write, but cannot revoke another token of its user (403 naming tokens:write)", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const first = await launch(reg);
  expect(first.res.status).toBe(200);
  const second = await launch(reg, { sub: first.body.launch.sub });
  expect(second.body.user.id).toBe(first.body.user.id);
  const idOf = async (token: string) => (await callJson("/api/auth/me", { token })).body.token.id as string;
  const [firstId, secondId] = [await idOf(first.body.session.token), await idOf(second.body.session.token)];
  const revoke = (token: string, id: string) =>
    callJson(`/api/integrations/tokens/${id}`, { token, method: "DELETE" });

  const other = await revoke(first.body.session.token, secondId);
  expect(other.res.status).toBe(403);
  expect(other.body.code).toBe("missing_ability");
  expect(other.body.detail).toContain("tokens:write");
  expect((await callJson("/api/auth/me", { token: second.body.session.token })).res.status).toBe(200);

  const self = await revoke(first.body.session.token, firstId);
  expect(self.res.status).toBe(204);
  const after = await callJson("/api/auth/me", { token: first.body.session.token });
  expect(after.res.status).toBe(401);
  // The other session is untouched.
  expect((await callJson("/api/auth/me", { token: second.body.session.token })).res.status).toBe(200);
});

it("an unpublished course or lesson is refused exactly like an unknown one: no title, nothing provisioned", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const draft = await createPublishedCourse({
    lessons: 1,
    blocksPerLesson: 1,
    itemsPerBlock: 1,
    published: false,
  });
  const lessonId = draft.lessons[0]!.id;
  const titles = await db()
    .select({ course: courses.title, lesson: lessons.title })
    .from(courses)
    .innerJoin(lessons, eq(lessons.courseId, courses.id))
    .where(eq(lessons.id, lessonId))
    .get();
  const unknown = await launch(reg, { [`${LTI}custom`]: { lingua_course_id: "crs_missing" } });
  const detail = (kind: string, id: string) =>
    `No Lingua ${kind} ${id}; check the link's custom parameters or URL.`;
  expect(unknown.body.detail).toBe(detail("course", "crs_missing"));
  const cases: [Record<string, unknown>, string][] = [
    [{ [`${LTI}custom`]: { lingua_course_id: draft.courseId } }, detail("course", draft.courseId)],
    [{ [`${LTI}custom`]: { lingua_lesson_id: lessonId } }, detail("lesson", lessonId)],
    [
      { [`${LTI}target_link_uri`]: `${CALLBACK_URL}?course=${draft.courseId}` },
      detail("course", draft.courseId),
    ],
    [{ [`${LTI}target_link_uri`]: `${CALLBACK_URL}?lesson=${lessonId}` }, detail("lesson", lessonId)],
  ];
  for (const [overrides, expected] of cases) {
    const sub = `user-${crypto.randomUUID()}`;
    const { res, body } = await launch(reg, { sub, ...overrides });
    expect(res.status).toBe(400);
    expect(Object.keys(body).sort()).toEqual(Object.keys(unknown.body).sort());
    expect(body).toMatchObject({ code: "lti_launch_refused", reason: "target_unknown", detail: expected });
    expect(JSON.stringify(body)).not.toContain(titles!.course);
    expect(JSON.stringify(body)).not.toContain(titles!.lesson);
    const logged = await callJson(`/api/integrations/lti-launches/${body.launch_id}`, {
      token: tenant.admin.token,
    });
    expect(logged.body).toMatchObject({ status: "failed", failure_reason: "target_unknown", target: null });
    expect(JSON.stringify(logged.body)).not.toContain(titles!.course);
    const linked = await db().$count(
      ltiUserLinks,
      and(eq(ltiUserLinks.consumerId, reg.consumer.id), eq(ltiUserLinks.sub, sub)),
    );
    expect(linked).toBe(0);
  }
});

/** The same platform (issuer and client id) registered by a second institution, with these deployments. */
async function registerAgain(reg: Registered, admin: TestUser, deploymentIds: string[]) {
  const { res, body } = await callJson("/api/integrations/lti-consumers", {
    token: admin.token,
    body: {
      name: "Same LMS",
      issuer: reg.urls.issuer,
      client_id: reg.clientId,
      deployment_ids: deploymentIds,
      auth_login_url: reg.urls.auth_login_url,
      auth_token_url: reg.urls.auth_token_url,
      jwks_url: reg.urls.jwks_url,
    },
  });
  expect(res.status).toBe(201);
  return body;
}

it("a pair two institutions registered for the same deployment: the launch is refused, logged, and provisions nothing", async () => {
  const [a, b] = await Promise.all([createTenant(), createTenant()]);
  const reg = await registerPlatform(a.admin);
  await registerAgain(reg, b.admin, [reg.deploymentId, "dep-b"]);
  const ofIssuer = db()
    .select({ id: ltiConsumers.id })
    .from(ltiConsumers)
    .where(eq(ltiConsumers.issuer, reg.urls.issuer));
  const states = async () => db().$count(ltiStates, inArray(ltiStates.consumerId, ofIssuer));
  const warn = vi.spyOn(console, "warn");
  for (const params of [{}, { lti_deployment_id: reg.deploymentId }] as Record<string, string>[]) {
    const refused = await login(reg, params);
    expect(refused.res.status).toBe(400);
    expect(refused.res.headers.get("Content-Type")).toContain("text/html");
    const page = await refused.res.text();
    expect(page).toContain("registration_ambiguous");
    expect(refused.res.headers.get("Location")).toBeNull();
    expect(refused.cookie).toBeNull();
    const asJson = await callJson(
      `/api/lti/login?${new URLSearchParams({ iss: reg.urls.issuer, client_id: reg.clientId, login_hint: "h", target_link_uri: CALLBACK_URL, ...params })}`,
      { headers: { Accept: "application/json" } },
    );
    expect(asJson.res.status).toBe(400);
    expect(asJson.body).toMatchObject({ code: "bad_request", reason: "registration_ambiguous" });
    expect(JSON.stringify(asJson.body)).not.toContain(b.institution.id);
    expect(JSON.stringify(asJson.body)).not.toContain(a.institution.id);
  }
  expect(await states()).toBe(0);
  const logged = warn.mock.calls.map((c) => String(c[0])).filter((l) => l.includes("registration_ambiguous"));
  expect(logged.length).toBeGreaterThanOrEqual(2);
  expect(JSON.parse(logged[0]!)).toMatchObject({
    level: "warn",
    reason: "registration_ambiguous",
    issuer: reg.urls.issuer,
  });
  warn.mockRestore();
  const provisioned =
    (await db().$count(ltiUserLinks, inArray(ltiUserLinks.consumerId, ofIssuer))) +
    (await db().$count(
      ltiLaunches,
      inArray(ltiLaunches.institutionId, [a.institution.id, b.institution.id]),
    ));
  expect(provisioned).toBe(0);
});

it("a pair two institutions registered for different deployments: the login's deployment id chooses, each launch goes to its own institution", async () => {
  const [a, b] = await Promise.all([createTenant(), createTenant()]);
  const reg = await registerPlatform(a.admin);
  const second = await registerAgain(reg, b.admin, ["dep-b"]);
  for (const [tenant, consumerId, deployment] of [
    [a, reg.consumer.id, reg.deploymentId],
    [b, second.id, "dep-b"],
  ] as const) {
    const { state, nonce, res } = await login(reg, { lti_deployment_id: deployment });
    expect(res.status).toBe(302);
    const idToken = await reg.platform.idToken(
      launchClaims(reg, nonce, { [`${LTI}deployment_id`]: deployment }),
    );
    const launched = await postCallback({ id_token: idToken, state });
    expect(launched.status).toBe(200);
    const body = (await launched.json()) as any;
    expect(body.launch).toMatchObject({ consumer_id: consumerId, deployment_id: deployment });
    expect(body.user.institution_id).toBe(tenant.institution.id);
  }
  // Without a deployment id the login cannot tell them apart: refused, as above.
  const blind = await login(reg);
  expect(blind.res.status).toBe(400);
  // A deployment id neither lists: unknown, as before.
  expect((await login(reg, { lti_deployment_id: "dep-none" })).res.status).toBe(400);
});

it("a login steered to one registration by its deployment id cannot carry a launch of a deployment another institution's registration also lists", async () => {
  const [a, b] = await Promise.all([createTenant(), createTenant()]);
  const reg = await registerPlatform(a.admin);
  // b lists a deployment of its own and a's.
  const second = await registerAgain(reg, b.admin, ["dep-b-only", reg.deploymentId]);
  const { state, nonce, res } = await login(reg, { lti_deployment_id: "dep-b-only" });
  expect(res.status).toBe(302);
  const sub = `user-${crypto.randomUUID()}`;
  const idToken = await reg.platform.idToken(launchClaims(reg, nonce, { sub }));
  const refused = await postCallback({ id_token: idToken, state });
  expect(refused.status).toBe(400);
  const body = (await refused.json()) as any;
  expect(body).toMatchObject({ code: "lti_launch_refused", reason: "registration_ambiguous" });
  expect(JSON.stringify(body)).not.toContain(a.institution.id);
  expect(await db().$count(ltiUserLinks, eq(ltiUserLinks.sub, sub))).toBe(0);
  const launches = await db().$count(
    ltiLaunches,
    or(
      inArray(ltiLaunches.institutionId, [a.institution.id, b.institution.id]),
      eq(ltiLaunches.consumerId, second.id),
    ),
  );
  expect(launches).toBe(0);
});
