import { expect, it } from "vitest";
import { call, callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant, freshIp, mintToken, type Tenant } from "../helpers/tenants";
import {
  authorize,
  DL_CONTENT_ITEMS_CLAIM,
  DL_DATA_CLAIM,
  DL_SETTINGS_CLAIM,
  deepLinkingClaims,
  deepLinkingState,
  LEARNER_ROLE,
  LTI,
  launchThroughPlatform,
  login,
  postCallback,
  type Registered,
  registerPlatform,
} from "./support";

/**
 * Deep Linking 2.0 end to end against the loopback platform: its deep-linking request through the
 * registration's own login and callback, the items, the signed response verified by the platform
 * with the tool's key set, and the later launches of the links it made.
 */

interface Setup {
  tenant: Tenant;
  reg: Registered;
  returnUrl: string;
}

async function setup(): Promise<Setup> {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  const { return_url } = await deepLinkingState(reg.platform);
  return { tenant, reg, returnUrl: return_url };
}

/**
 * An instructor's deep-linking request as the platform's browser makes it: the registration's own
 * login, the platform's authorization endpoint, the form post to the callback. `json`: the callback
 * asked for JSON (a session) rather than as a browser (303 to the selection page).
 */
async function deepLinkingLaunch(
  s: Setup,
  options: { settings?: Record<string, unknown>; claims?: Record<string, unknown>; json?: boolean } = {},
) {
  const started = await login(s.reg, {}, freshIp(), s.reg.consumer.tool.login_url);
  expect(started.res.status).toBe(302);
  const claims = deepLinkingClaims(s.reg, "", s.returnUrl, options.settings, options.claims);
  const authorized = await authorize(s.reg.platform, started.redirect!, claims);
  expect(authorized.status).toBe(200);
  const res = await postCallback(authorized.body.fields!, {
    url: authorized.body.action!,
    json: options.json ?? true,
  });
  const body = res.headers.get("Content-Type")?.includes("json") ? ((await res.json()) as any) : null;
  return { res, body, claims, settings: claims[DL_SETTINGS_CLAIM] as Record<string, unknown> };
}

function respond(launchId: string, token: string, body: unknown, headers: Record<string, string> = {}) {
  return callJson(`/api/lti/deep-linking/${launchId}/response`, {
    method: "POST",
    token,
    body,
    headers: { Accept: "application/json", ...headers },
  });
}

/** Posts the JWT to the platform's return URL as the browser's form would. */
async function postToPlatform(url: string, jwt: string) {
  return fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ JWT: jwt }),
  });
}

function decode(jwt: string): Record<string, any> {
  return JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());
}

function cspOf(res: Response): Record<string, string> {
  const csp = res.headers.get("Content-Security-Policy") ?? "";
  return Object.fromEntries(
    csp.split(";").map((part) => {
      const [name, ...values] = part.trim().split(/\s+/);
      return [name!, values.join(" ")];
    }),
  );
}

it("links a lesson and a course: the platform verifies the response with the tool's keys, and their launches land there", async () => {
  const s = await setup();
  const course = await createPublishedCourse({ lessons: 2, blocksPerLesson: 1, itemsPerBlock: 1 });
  const dl = await deepLinkingLaunch(s);
  expect(dl.res.status).toBe(200);
  const launch = dl.body.launch;
  expect(launch).toMatchObject({
    status: "succeeded",
    kind: "deep_linking",
    resource_link: null,
    target: null,
    deep_linking: {
      return_url: s.returnUrl,
      accept_types: ["ltiResourceLink"],
      accept_presentation_document_targets: ["iframe", "window"],
      accept_multiple: true,
      accept_lineitem: true,
      title: "Add Lingua content",
      responded_at: null,
    },
  });
  const token = dl.body.session.token as string;

  // What may be linked: the published courses with their lessons, filtered like GET /api/courses.
  const items = await callJson(
    `/api/lti/deep-linking/${launch.id}/items?q=${encodeURIComponent(course.slug.slice(8))}`,
    { token },
  );
  expect(items.res.status).toBe(200);
  expect(items.body.meta.total).toBe(1);
  expect(items.body.data[0]).toMatchObject({
    id: course.courseId,
    lessons: [
      { id: course.lessons[0]!.id, title: "Lesson 1", position: 1 },
      { id: course.lessons[1]!.id, title: "Lesson 2", position: 2 },
    ],
  });
  const unknownFilter = await callJson(`/api/lti/deep-linking/${launch.id}/items?published=false`, { token });
  expect(unknownFilter.res.status).toBe(422);

  await deepLinkingState(s.reg.platform, {
    deployment_id: s.reg.deploymentId,
    data: dl.settings.data,
  });
  const lessonId = course.lessons[1]!.id;
  const answered = await respond(launch.id, token, {
    items: [
      { lesson_id: lessonId, line_item: { score_maximum: 10, label: "Week 2 quiz", tag: "quiz" } },
      { course_id: course.courseId, title: "The whole course" },
    ],
  });
  expect(answered.res.status).toBe(200);
  expect(answered.res.headers.get("Cache-Control")).toBe("no-store");
  expect(answered.res.headers.get("X-RateLimit-Limit")).toEqual(expect.any(String));
  expect(answered.body.return_url).toBe(s.returnUrl);

  // The platform receives it as the browser's form post and verifies it against the tool's JWKS.
  const posted = await postToPlatform(answered.body.return_url, answered.body.jwt);
  expect(posted.status).toBe(200);
  const [received] = (await deepLinkingState(s.reg.platform)).returns;
  expect(received!.problems).toEqual([]);
  expect(received!.verified_with).toBe(s.reg.consumer.tool.jwks_url);
  const claims = received!.claims!;
  const now = Math.floor(Date.now() / 1000);
  expect(claims).toMatchObject({
    iss: s.reg.clientId,
    aud: s.reg.urls.issuer,
    nonce: expect.any(String),
    [`${LTI}deployment_id`]: s.reg.deploymentId,
    [`${LTI}message_type`]: "LtiDeepLinkingResponse",
    [`${LTI}version`]: "1.3.0",
    [DL_DATA_CLAIM]: dl.settings.data,
  });
  expect(claims.iat).toBeGreaterThanOrEqual(now - 60);
  expect((claims.exp as number) - (claims.iat as number)).toBe(600);
  expect(received!.header).toMatchObject({ alg: "RS256", kid: expect.any(String) });
  const callback = s.reg.consumer.tool.launch_url as string;
  expect(claims[DL_CONTENT_ITEMS_CLAIM]).toEqual([
    {
      type: "ltiResourceLink",
      title: "Lesson 2",
      url: `${callback}?lesson=${lessonId}`,
      custom: { lingua_lesson_id: lessonId },
      lineItem: { scoreMaximum: 10, label: "Week 2 quiz", resourceId: lessonId, tag: "quiz" },
    },
    {
      type: "ltiResourceLink",
      title: "The whole course",
      url: `${callback}?course=${course.courseId}`,
      custom: { lingua_course_id: course.courseId },
    },
  ]);

  // One response per launch, and the launch log says it was sent.
  const again = await respond(launch.id, token, { items: [{ course_id: course.courseId }] });
  expect(again.res.status).toBe(409);
  expect(again.body.code).toBe("lti_deep_linking_responded");
  const logged = await callJson(`/api/integrations/lti-launches/${launch.id}`, {
    token: s.tenant.admin.token,
  });
  expect(logged.body.kind).toBe("deep_linking");
  expect(logged.body.deep_linking.responded_at).toEqual(expect.any(String));
  const listed = await callJson("/api/integrations/lti-launches?kind=deep_linking", {
    token: s.tenant.admin.token,
  });
  expect(listed.body.data.map((l: { id: string }) => l.id)).toEqual([launch.id]);

  // The platform launches each link with its url as target_link_uri and its custom claims.
  const [lessonLink, courseLink] = claims[DL_CONTENT_ITEMS_CLAIM] as { url: string; custom: object }[];
  for (const [link, target] of [
    [lessonLink!, { type: "lesson", id: lessonId, title: "Lesson 2" }],
    [courseLink!, { type: "course", id: course.courseId }],
  ] as const) {
    const later = await launchThroughPlatform(s.reg, {
      params: { target_link_uri: link.url },
      claims: { [`${LTI}target_link_uri`]: link.url, [`${LTI}custom`]: link.custom },
    });
    expect(later.res?.status).toBe(200);
    expect(later.body.launch).toMatchObject({ kind: "resource_link", target });
    // Its url alone (a platform that drops custom parameters) lands there too.
    const byUrl = await launchThroughPlatform(s.reg, {
      params: { target_link_uri: link.url },
      claims: { [`${LTI}target_link_uri`]: link.url, [`${LTI}custom`]: {} },
    });
    expect(byUrl.body.launch.target).toMatchObject(target);
  }
});

it("a browser lands on the selection page and gets a page posting the JWT; both pages have a strict CSP, framed by the platform only", async () => {
  const s = await setup();
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 });
  // A return URL with characters that must be escaped in HTML.
  const returnUrl = `${s.returnUrl}?ctx=1&note="><script>alert(1)</script>`;
  const dl = await deepLinkingLaunch(s, { json: false, settings: { deep_link_return_url: returnUrl } });
  expect(dl.res.status).toBe(303);
  const location = new URL(dl.res.headers.get("Location")!);
  const launchId = location.pathname.split("/")[4]!;
  expect(location.pathname).toBe(`/api/lti/deep-linking/${launchId}/select`);
  const code = new URLSearchParams(location.hash.slice(1)).get("code")!;
  expect(code).toBeTruthy();

  const page = await call(location.pathname, { headers: { Accept: "text/html" } });
  expect(page.status).toBe(200);
  expect(page.headers.get("Cache-Control")).toBe("no-store");
  const platformOrigin = new URL(s.returnUrl).origin;
  const csp = cspOf(page);
  expect(csp["default-src"]).toBe("'none'");
  expect(csp["script-src"]).toMatch(/^'nonce-[\w-]{16,}'$/);
  expect(csp["style-src"]).toBe(csp["script-src"]);
  expect(csp["connect-src"]).toBe("'self'");
  expect(csp["form-action"]).toBe(platformOrigin);
  expect(csp["frame-ancestors"]).toBe(platformOrigin);
  expect(page.headers.get("X-Frame-Options")).toBeNull();
  const html = await page.text();
  const nonce = csp["script-src"]!.slice(7, -1);
  expect(html.match(/<script[^>]*>/g)).toEqual([`<script nonce="${nonce}">`]);
  expect(html).not.toContain("<script>alert(1)");
  expect(html).toContain("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;");

  // What the page's script does: the code for the session, then the choice as a form body.
  const session = await callJson("/api/lti/session", {
    body: { code },
    headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
  });
  expect(session.res.status).toBe(200);
  const token = session.body.session.token as string;
  await deepLinkingState(s.reg.platform, { deployment_id: s.reg.deploymentId, data: dl.settings.data });
  const form = new URLSearchParams();
  form.append("lesson_id", course.lessons[0]!.id);
  form.append("course_id", course.courseId);
  form.append("score_maximum", "5");
  const answered = await call(`/api/lti/deep-linking/${launchId}/response`, {
    method: "POST",
    token,
    rawBody: form.toString(),
    headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "text/html,*/*;q=0.8" },
  });
  expect(answered.status).toBe(200);
  expect(answered.headers.get("Content-Type")).toMatch(/^text\/html/);
  const answerCsp = cspOf(answered);
  expect(answerCsp["script-src"]).toMatch(/^'nonce-[\w-]{16,}'$/);
  expect(answerCsp["form-action"]).toBe(platformOrigin);
  expect(answerCsp["frame-ancestors"]).toBe(platformOrigin);
  expect(answerCsp["connect-src"]).toBeUndefined();
  const answerHtml = await answered.text();
  const action = /<form id="return" method="post" action="([^"]*)">/.exec(answerHtml)?.[1];
  expect(action).toBe(
    returnUrl
      .replaceAll("&", "&amp;")
      .replaceAll('"', "&quot;")
      .replaceAll("<", "&lt;")
      .replaceAll(">", "&gt;"),
  );
  const jwt = /name="JWT" value="([\w.-]+)"/.exec(answerHtml)?.[1];
  expect(answerHtml).toContain(
    `<script nonce="${answerCsp["script-src"]!.slice(7, -1)}">document.getElementById("return").submit();</script>`,
  );

  // The browser follows the form to the platform, which verifies it.
  const posted = await postToPlatform(returnUrl, jwt!);
  expect(posted.status).toBe(200);
  const [received] = (await deepLinkingState(s.reg.platform)).returns;
  expect(received!.problems).toEqual([]);
  const items = received!.claims![DL_CONTENT_ITEMS_CLAIM] as Record<string, unknown>[];
  expect(items.map((item) => item.custom)).toEqual([
    { lingua_lesson_id: course.lessons[0]!.id },
    { lingua_course_id: course.courseId },
  ]);
  expect(items.map((item) => (item.lineItem as { scoreMaximum: number }).scoreMaximum)).toEqual([5, 5]);
  expect(decode(jwt!)[DL_DATA_CLAIM]).toBe(dl.settings.data);

  // Answered: the selection page is gone.
  const gone = await call(location.pathname, { headers: { Accept: "text/html" } });
  expect(gone.status).toBe(404);
  expect(await gone.text()).toContain("chosen already");
});

it("refuses what the platform does not accept, an item without an id and unpublished content with 422, without using up the response", async () => {
  const s = await setup();
  const [course, draft] = await Promise.all([
    createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 }),
    createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1, published: false }),
  ]);
  const single = await deepLinkingLaunch(s, { settings: { accept_multiple: false, accept_lineitem: false } });
  const { id } = single.body.launch;
  const token = single.body.session.token as string;
  const refusals: [unknown, string, string][] = [
    [
      { items: [{ course_id: course.courseId }, { lesson_id: course.lessons[0]!.id }] },
      "lti_deep_linking_not_accepted",
      "items",
    ],
    [
      { items: [{ course_id: course.courseId, line_item: { score_maximum: 10 } }] },
      "lti_deep_linking_not_accepted",
      "items.0.line_item",
    ],
    [{ items: [{ title: "No id" }] }, "validation_failed", "items.0.course_id"],
    [
      { items: [{ course_id: course.courseId, lesson_id: course.lessons[0]!.id }] },
      "validation_failed",
      "items.0.lesson_id",
    ],
    [{ items: [{ course_id: draft.courseId }] }, "validation_failed", "items.0.course_id"],
    [{ items: [{ lesson_id: draft.lessons[0]!.id }] }, "validation_failed", "items.0.lesson_id"],
    [{ items: [{ course_id: "crs_never_issued" }] }, "validation_failed", "items.0.course_id"],
    [{ items: [{ course_id: course.courseId }], extra: true }, "validation_failed", ""],
    [{}, "validation_failed", "items"],
  ];
  for (const [body, code, path] of refusals) {
    const { res, body: problem } = await respond(id, token, body);
    expect({ status: res.status, code: problem.code }, JSON.stringify(body)).toEqual({ status: 422, code });
    if (path) expect(problem.errors.map((e: { path: string }) => e.path)).toContain(path);
  }
  // A form with a field it does not know, or a score that is not a number.
  for (const form of ["course_id=x&colour=red", `course_id=${course.courseId}&score_maximum=lots`]) {
    const res = await call(`/api/lti/deep-linking/${id}/response`, {
      method: "POST",
      token,
      rawBody: form,
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
    });
    expect(res.status).toBe(422);
  }
  const text = await call(`/api/lti/deep-linking/${id}/response`, {
    method: "POST",
    token,
    rawBody: "course_id",
    headers: { "Content-Type": "text/plain" },
  });
  expect(text.status).toBe(415);
  const malformed = await call(`/api/lti/deep-linking/${id}/response`, {
    method: "POST",
    token,
    rawBody: "{items:",
    headers: { "Content-Type": "application/json" },
  });
  expect(malformed.status).toBe(400);
  expect(((await malformed.json()) as { code: string }).code).toBe("malformed_json");

  // Nothing was used up: one accepted item goes through.
  const ok = await respond(id, token, { items: [{ course_id: course.courseId }] });
  expect(ok.res.status).toBe(200);
  expect(decode(ok.body.jwt)[DL_CONTENT_ITEMS_CLAIM]).toHaveLength(1);

  // A platform that accepts no resource links takes none (an empty response, "cancel", it does).
  const files = await deepLinkingLaunch(s, { settings: { accept_types: ["file"] } });
  const refused = await respond(files.body.launch.id, files.body.session.token, {
    items: [{ course_id: course.courseId }],
  });
  expect(refused.res.status).toBe(422);
  expect(refused.body.errors[0].message).toMatch(/accept_types/);
  const cancelled = await respond(files.body.launch.id, files.body.session.token, { items: [] });
  expect(cancelled.res.status).toBe(200);
  expect(decode(cancelled.body.jwt)[DL_CONTENT_ITEMS_CLAIM]).toEqual([]);
});

it("answers one of two racing responses; the other is 409", async () => {
  const s = await setup();
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 });
  const dl = await deepLinkingLaunch(s);
  const body = { items: [{ course_id: course.courseId }] };
  const results = await Promise.all(
    Array.from({ length: 4 }, () => respond(dl.body.launch.id, dl.body.session.token, body)),
  );
  expect(results.map((r) => r.res.status).sort()).toEqual([200, 409, 409, 409]);
});

it("takes only the launch's own session: another launch's, an API token or a resource-link launch is refused", async () => {
  const s = await setup();
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 1 });
  const [mine, other] = [await deepLinkingLaunch(s), await deepLinkingLaunch(s)];
  const id = mine.body.launch.id;
  const body = { items: [{ course_id: course.courseId }] };
  const items = `/api/lti/deep-linking/${id}/items`;

  const otherSession = await callJson(items, { token: other.body.session.token });
  expect(otherSession.res.status).toBe(403);
  expect(otherSession.body.detail).toContain(id);
  expect((await respond(id, other.body.session.token, body)).res.status).toBe(403);
  const apiToken = await mintToken(s.tenant.admin, ["content:read"]);
  expect((await callJson(items, { token: apiToken.token })).res.status).toBe(403);

  // A resource-link launch has no deep linking, even with its own session.
  const link = await launchThroughPlatform(s.reg, {});
  expect(link.body.launch.kind).toBe("resource_link");
  const linkItems = await callJson(`/api/lti/deep-linking/${link.body.launch.id}/items`, {
    token: link.body.session.token,
  });
  expect(linkItems.res.status).toBe(404);
  expect((await respond(link.body.launch.id, link.body.session.token, body)).res.status).toBe(404);
  const page = await call(`/api/lti/deep-linking/${link.body.launch.id}/select`);
  expect(page.status).toBe(404);

  // Another institution's session does not reach this launch.
  const elsewhere = await setup();
  const theirs = await deepLinkingLaunch(elsewhere);
  expect((await callJson(items, { token: theirs.body.session.token })).res.status).toBe(404);

  // A deep-linking request in a learner's role: accepted and logged, but nothing can be chosen.
  const learner = await deepLinkingLaunch(s, { claims: { [`${LTI}roles`]: [LEARNER_ROLE] } });
  expect(learner.res.status).toBe(200);
  const refused = await callJson(`/api/lti/deep-linking/${learner.body.launch.id}/items`, {
    token: learner.body.session.token,
  });
  expect(refused.res.status).toBe(403);
  expect(refused.body.detail).toMatch(/instructors/);

  // The launch's own session still works, untouched by the refusals.
  expect((await callJson(items, { token: mine.body.session.token })).res.status).toBe(200);
});

it("refuses a deep-linking request without its required settings, or with a return URL that is not https", async () => {
  const s = await setup();
  const cases: [Record<string, unknown>, string, string][] = [
    [{ [DL_SETTINGS_CLAIM]: undefined }, "claim_missing", DL_SETTINGS_CLAIM],
    [
      {
        [DL_SETTINGS_CLAIM]: { accept_types: ["ltiResourceLink"], accept_presentation_document_targets: [] },
      },
      "claim_missing",
      "deep_link_return_url",
    ],
    [
      {
        [DL_SETTINGS_CLAIM]: { deep_link_return_url: s.returnUrl, accept_presentation_document_targets: [] },
      },
      "claim_missing",
      "accept_types",
    ],
    [
      { [DL_SETTINGS_CLAIM]: { deep_link_return_url: s.returnUrl, accept_types: [] } },
      "claim_missing",
      "accept_presentation_document_targets",
    ],
    [
      {
        [DL_SETTINGS_CLAIM]: {
          deep_link_return_url: "javascript:alert(1)",
          accept_types: [],
          accept_presentation_document_targets: [],
        },
      },
      "claim_invalid",
      "deep_link_return_url",
    ],
  ];
  for (const [claims, reason, named] of cases) {
    const dl = await deepLinkingLaunch(s, { claims });
    expect(dl.res.status, reason).toBe(400);
    expect(dl.body.reason).toBe(reason);
    expect(dl.body.detail).toContain(named);
  }
  // A message type the tool does not know is still refused.
  const other = await deepLinkingLaunch(s, {
    claims: { [`${LTI}message_type`]: "LtiSubmissionReviewRequest" },
  });
  expect(other.body.reason).toBe("message_type_unsupported");
});

it("lists only published courses", async () => {
  const s = await setup();
  const draft = await createPublishedCourse({
    lessons: 1,
    blocksPerLesson: 1,
    itemsPerBlock: 1,
    published: false,
  });
  const dl = await deepLinkingLaunch(s);
  const { body } = await callJson(
    `/api/lti/deep-linking/${dl.body.launch.id}/items?per_page=100&q=${encodeURIComponent(draft.slug.slice(8))}`,
    { token: dl.body.session.token },
  );
  expect(body.data).toEqual([]);
});
