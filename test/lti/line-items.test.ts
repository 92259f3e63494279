// AGS line items of a launch's context (list, create), a grade sent to a line item the tool created,
// what a forged line_item_url gets, and LTI's access tokens on the platform's token cache.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { decodeProtectedHeader } from "jose";
import { expect, it } from "vitest";
import { ltiPassbacks } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createCourse } from "../helpers/catalog";
import { createTenant, mintToken } from "../helpers/tenants";
import {
  AGS_CLAIM,
  cachedTokens,
  LINE_ITEM_SCOPE,
  launch,
  registerPlatform,
  SCORE_SCOPE,
  servicesState,
} from "./support";

const LINE_ITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json";
const CONTAINER_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json";
const READONLY_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly";

async function contextLaunch(
  scope: string[] = [SCORE_SCOPE, LINE_ITEM_SCOPE],
  agsExtra: Record<string, unknown> = {},
) {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  const launched = await launch(reg, {
    [AGS_CLAIM]: {
      scope,
      lineitems: reg.urls.lineitems,
      lineitem: `${reg.urls.lineitems}/li-1`,
      ...agsExtra,
    },
  });
  if (launched.res.status !== 200) throw new Error(JSON.stringify(launched.body));
  return { tenant, reg, launch: launched.body.launch };
}

const lineItemsPath = (launchId: string) => `/api/integrations/lti-launches/${launchId}/line-items`;

function create(
  token: string,
  launchId: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return callJson(lineItemsPath(launchId), { token, body, headers });
}

function grade(token: string, launchId: string, body: Record<string, unknown>) {
  return callJson(`/api/lti/grade-passback/${launchId}`, { token, body });
}

it("creates a line item tagged with the course, lists it back filtered, and a grade goes to it", async () => {
  const { tenant, reg, launch: l } = await contextLaunch();
  const course = await createCourse({ lessons: 1 });
  const created = await create(tenant.admin.token, l.id, {
    label: "Unit 1",
    score_maximum: 20,
    course_id: course.id,
    tag: "final",
  });
  expect(created.res.status).toBe(201);
  expect(created.body).toEqual({
    id: expect.stringMatching(new RegExp(`^${reg.urls.lineitems}/`)),
    label: "Unit 1",
    score_maximum: 20,
    resource_id: course.id,
    tag: "final",
  });
  const lesson = await create(tenant.admin.token, l.id, {
    label: "Lesson 1",
    score_maximum: 5,
    lesson_id: course.lessonIds[0],
  });
  expect(lesson.body).toMatchObject({ resource_id: course.lessonIds[0], tag: null });

  const state = await servicesState(reg.platform);
  const posts = state.service_requests.filter((r) => r.service === "lineitems" && r.method === "POST");
  expect(posts[0]).toMatchObject({
    content_type: LINE_ITEM_TYPE,
    accept: LINE_ITEM_TYPE,
    token_scope: LINE_ITEM_SCOPE,
    status: 201,
    body: { label: "Unit 1", scoreMaximum: 20, resourceId: course.id, tag: "final" },
  });

  const all = await callJson(lineItemsPath(l.id), { token: tenant.admin.token });
  expect(all.res.status).toBe(200);
  expect(all.body.meta.total).toBe(2);
  const filtered = await callJson(`${lineItemsPath(l.id)}?resource_id=${course.id}&tag=final`, {
    token: tenant.admin.token,
  });
  expect(filtered.body.data).toEqual([created.body]);
  const gets = (await servicesState(reg.platform)).service_requests.filter(
    (r) => r.service === "lineitems" && r.method === "GET",
  );
  expect(gets.at(-1)).toMatchObject({ accept: CONTAINER_TYPE, token_scope: LINE_ITEM_SCOPE });
  expect(new URLSearchParams(gets.at(-1)!.search).get("resource_id")).toBe(course.id);
  expect(new URLSearchParams(gets.at(-1)!.search).get("tag")).toBe("final");

  // The grade goes to the new column.
  const graded = await grade(tenant.admin.token, l.id, {
    score_given: 15,
    score_maximum: 20,
    line_item_url: created.body.id,
  });
  expect(graded.res.status).toBe(200);
  expect(graded.body).toMatchObject({ status: "succeeded", line_item_url: created.body.id });
  const [score] = (await reg.platform.state()).score_requests;
  expect(`${new URL(created.body.id).pathname}/scores`).toBe(score!.path);
  expect(score!.body).toMatchObject({ scoreGiven: 15, scoreMaximum: 20 });
  // Without it, the launch's own line item, as before.
  const own = await grade(tenant.admin.token, l.id, { score_given: 1, score_maximum: 1 });
  expect(own.body.line_item_url).toBeNull();
  expect((await reg.platform.state()).score_requests.at(-1)!.path).toBe(
    `${new URL(reg.urls.lineitems).pathname}/li-1/scores`,
  );
});

it("a line_item_url outside the launch's context is refused (422) and nothing is sent or recorded", async () => {
  const { tenant, reg, launch: l } = await contextLaunch();
  const lineitems = reg.urls.lineitems;
  const base = new URL(lineitems);
  const forged = [
    "https://attacker.example/lineitems/1",
    `${base.origin}/p/another-platform/lineitems/1`,
    `${lineitems}/../../other/lineitems/1`,
    `${lineitems}/%2e%2e/%2e%2e/other/lineitems/1`,
    `${lineitems}/x%2F..%2F..%2Fother`,
    `${lineitems}-evil/1`,
    `${lineitems}`,
    `${lineitems}//1`,
    `${lineitems}/1#fragment`,
    `${base.protocol}//user:pw@${base.host}${base.pathname}/1`,
    "not a url",
  ];
  for (const url of forged) {
    const { res, body } = await grade(tenant.admin.token, l.id, {
      score_given: 1,
      score_maximum: 1,
      line_item_url: url,
    });
    expect(res.status, url).toBe(422);
    expect(body.errors[0].path).toBe("line_item_url");
  }
  expect((await reg.platform.state()).score_requests).toHaveLength(0);
  expect(await database(env.DB).$count(ltiPassbacks, eq(ltiPassbacks.launchId, l.id))).toBe(0);
  // A line item below the launch's lineitems URL, with a query string, is one of its context.
  const ok = await grade(tenant.admin.token, l.id, {
    score_given: 1,
    score_maximum: 1,
    line_item_url: `${lineitems}/li-7?type_id=3`,
  });
  expect(ok.res.status).toBe(200);
  const [score] = (await reg.platform.state()).score_requests;
  expect(score).toMatchObject({ path: `${base.pathname}/li-7/scores`, search: "?type_id=3" });
});

it("without a lineitems URL or the line-item scope: 409 lti_line_items_unavailable; readonly lists but cannot create", async () => {
  const course = await createCourse();
  const none = await contextLaunch([SCORE_SCOPE]);
  const listed = await callJson(lineItemsPath(none.launch.id), { token: none.tenant.admin.token });
  expect(listed.res.status).toBe(409);
  expect(listed.body.code).toBe("lti_line_items_unavailable");
  const noList = await contextLaunch([SCORE_SCOPE, LINE_ITEM_SCOPE], { lineitems: undefined });
  expect(
    (await callJson(lineItemsPath(noList.launch.id), { token: noList.tenant.admin.token })).res.status,
  ).toBe(409);
  // Without a lineitems URL no line_item_url can be of the context.
  const elsewhere = await grade(noList.tenant.admin.token, noList.launch.id, {
    score_given: 1,
    score_maximum: 1,
    line_item_url: `${noList.reg.urls.lineitems}/li-2`,
  });
  expect(elsewhere.body.code).toBe("lti_not_gradable");

  const readonly = await contextLaunch([SCORE_SCOPE, READONLY_SCOPE]);
  const read = await callJson(lineItemsPath(readonly.launch.id), { token: readonly.tenant.admin.token });
  expect(read.res.status).toBe(200);
  expect((await servicesState(readonly.reg.platform)).service_requests[0]).toMatchObject({
    token_scope: READONLY_SCOPE,
  });
  const write = await create(readonly.tenant.admin.token, readonly.launch.id, {
    label: "x",
    score_maximum: 1,
    course_id: course.id,
  });
  expect(write.res.status).toBe(409);
  expect(write.body.code).toBe("lti_line_items_unavailable");
});

it("a line item needs one published course or lesson (422), lti:write, and the caller's own launch", async () => {
  const { tenant, reg, launch: l } = await contextLaunch();
  const draft = await createCourse({ published: false });
  const course = await createCourse({ lessons: 1 });
  const bodies = [
    { label: "x", score_maximum: 1, course_id: draft.id },
    { label: "x", score_maximum: 1, course_id: "crs_missing" },
    { label: "x", score_maximum: 1 },
    { label: "x", score_maximum: 1, course_id: course.id, lesson_id: course.lessonIds[0] },
    { label: "x", score_maximum: 0, course_id: course.id },
    { label: "x", score_maximum: 1, course_id: course.id, extra: true },
  ];
  for (const body of bodies) {
    const { res, body: problem } = await create(tenant.admin.token, l.id, body);
    expect(res.status, JSON.stringify(body)).toBe(422);
    expect(problem.code).toBe("validation_failed");
  }
  expect((await servicesState(reg.platform)).service_requests).toHaveLength(0);
  const reader = await mintToken(tenant.admin, ["lti:read"]);
  expect(
    (await create(reader.token, l.id, { label: "x", score_maximum: 1, course_id: course.id })).res.status,
  ).toBe(403);
  const other = await createTenant();
  expect((await callJson(lineItemsPath(l.id), { token: other.admin.token })).res.status).toBe(404);
  // An Idempotency-Key replays the first answer: one column, however often the request is retried.
  const key = crypto.randomUUID();
  const body = { label: "Once", score_maximum: 3, course_id: course.id };
  const first = await create(tenant.admin.token, l.id, body, { "Idempotency-Key": key });
  const again = await create(tenant.admin.token, l.id, body, { "Idempotency-Key": key });
  expect(again.body).toEqual(first.body);
  expect((await servicesState(reg.platform)).line_items.filter((i) => i.label === "Once")).toHaveLength(1);
});

it("the token cache: one token serves several passbacks; a registration change or a key rotation obtains a new one", async () => {
  const { tenant, reg, launch: l } = await contextLaunch();
  const scoreTokens = async () =>
    (await reg.platform.state()).token_requests.filter((t) => t.scope === SCORE_SCOPE);
  for (let i = 0; i < 3; i++)
    expect((await grade(tenant.admin.token, l.id, { score_given: i, score_maximum: 3 })).res.status).toBe(
      200,
    );
  expect(await scoreTokens()).toHaveLength(1);
  const [first, second, third] = (await reg.platform.state()).score_requests;
  expect(second!.authorization).toBe(first!.authorization);
  expect(third!.authorization).toBe(first!.authorization);
  expect(await cachedTokens(reg.consumer.id)).toBe(1);

  // The audience named explicitly (the same the platform expects): a change of what tokens are
  // obtained with, so the cached one is not used again.
  const put = await callJson(`/api/integrations/lti-consumers/${reg.consumer.id}`, {
    token: tenant.admin.token,
    method: "PUT",
    body: { auth_token_audience: reg.urls.auth_token_url },
  });
  expect(put.res.status).toBe(200);
  expect(await cachedTokens(reg.consumer.id)).toBe(0);
  expect((await grade(tenant.admin.token, l.id, { score_given: 1, score_maximum: 1 })).res.status).toBe(200);
  expect(await scoreTokens()).toHaveLength(2);
  const afterChange = (await reg.platform.state()).score_requests.at(-1)!;
  expect(afterChange.authorization).not.toBe(first!.authorization);
  expect(afterChange.token_known).toBe(true);

  // A key rotation too: the next token is asked for with the new key.
  const rotated = await callJson(`/api/integrations/lti-consumers/${reg.consumer.id}/keys/rotate`, {
    token: tenant.admin.token,
    method: "POST",
  });
  expect(rotated.res.status).toBe(200);
  await reg.platform.learnToolKeys();
  expect((await grade(tenant.admin.token, l.id, { score_given: 1, score_maximum: 1 })).res.status).toBe(200);
  const tokens = await scoreTokens();
  expect(tokens).toHaveLength(3);
  expect(decodeProtectedHeader(tokens[2]!.assertion!).kid).toBe(rotated.body.current_kid);
});
