// xAPI forwarding end to end, as an institution meets it: the endpoint registered through the API,
// learning activity recorded through the API, and a strict, conformant LRS on loopback
// (test/helpers/lrs-server.ts: Learning Locker's rule set plus its own checks, the version header and
// the credentials) receiving what Lingua sends. Each test asserts what the LRS stored and what the
// forwarding log and health say about it. The engine's answers to a failing LRS (isolation, splits,
// Retry-After, crashes, redelivery) are test/xapi/delivery.test.ts's; this file proves the product.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ITEM_TYPES, trainingItems } from "../../src/db/schema";
import type { createXapiEndpointRoute } from "../../src/domains/xapi/routes/create-endpoint";
import type { getXapiEndpointRoute } from "../../src/domains/xapi/routes/get-endpoint";
import type { listXapiStatementsRoute } from "../../src/domains/xapi/routes/list-statements";
import { database } from "../../src/platform/db";
import { type CallOptions, callJson, type ResponseBody } from "../helpers/api";
import { createLrs, LRS_BASIC, type Lrs, type LrsRequest, type StoredStatement } from "../helpers/lrs";
import { type CourseFixture, createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant, type Tenant, type TestUser } from "../helpers/tenants";
import { waitUntil } from "../webhooks/support";

type Endpoint = ResponseBody<typeof createXapiEndpointRoute, 201>;
type EndpointWithHealth = ResponseBody<typeof getXapiEndpointRoute, 200>;
type LogPage = ResponseBody<typeof listXapiStatementsRoute, 200>;
type LogEntry = LogPage["data"][number];

const BASE_PATH = "/api/integrations/xapi-endpoints";
const ADL = "http://adlnet.gov/expapi/verbs/";
const db = () => database(env.DB);
const base = () => env.PUBLIC_BASE_URL.replace(/\/$/, "");
const basicHeader = (user: string, password: string) => `Basic ${btoa(`${user}:${password}`)}`;

async function api<T = any>(admin: TestUser, path: string, options: CallOptions = {}) {
  return callJson<T>(path, { token: admin.token, ...options });
}

/** Registers an endpoint through the API, as an institution admin does. */
async function register(t: Tenant, body: Record<string, unknown>): Promise<Endpoint> {
  const { res, body: created } = await api<Endpoint>(t.admin, BASE_PATH, {
    body: { name: "Our LRS", ...body },
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(created)}`);
  return created;
}

const basicAuth = (credentials = LRS_BASIC) => ({ type: "basic", ...credentials });

/** The whole forwarding log of an endpoint, through the API. */
async function log(t: Tenant, endpointId: string, query = ""): Promise<LogEntry[]> {
  const { res, body } = await api<LogPage>(
    t.admin,
    `${BASE_PATH}/${endpointId}/statements?per_page=100${query}`,
  );
  expect(res.status).toBe(200);
  expect(body.meta.total).toBeLessThanOrEqual(100);
  return body.data;
}

/** Waits until the forwarding log holds at least `count` statements and none is pending. */
async function settled(t: Tenant, endpointId: string, count: number): Promise<LogEntry[]> {
  return waitUntil(async () => {
    const entries = await log(t, endpointId);
    return entries.length >= count && entries.every((e) => e.status !== "pending") ? entries : null;
  }, 25_000);
}

async function health(t: Tenant, endpointId: string) {
  const { res, body } = await api<EndpointWithHealth>(t.admin, `${BASE_PATH}/${endpointId}`);
  expect(res.status).toBe(200);
  return body.health;
}

/**
 * A published course of 2 lessons × 30 items, every item `reading` at A1, its items of every type
 * (cycled), so that attempts at all of them complete both lessons and the course and reach A1 in
 * reading (10 attempts of one skill and level at ≥ 70 % are needed), and make more statements than
 * one request to the LRS carries.
 */
async function course(): Promise<CourseFixture & { types: Map<string, string> }> {
  const fixture = await createPublishedCourse({
    lessons: 2,
    blocksPerLesson: 1,
    itemsPerBlock: 30,
    skills: ["reading"],
    levels: ["A1"],
  });
  const types = new Map(fixture.items.map((id, i) => [id, ITEM_TYPES[i % ITEM_TYPES.length]!]));
  const updates = [...types].map(([id, type]) =>
    db().update(trainingItems).set({ type }).where(eq(trainingItems.id, id)),
  );
  await db().batch(updates as [(typeof updates)[number], ...typeof updates]);
  return { ...fixture, types };
}

interface SentAttempt {
  id: string;
  training_item_id: string;
  score: number;
  correct: boolean;
  duration_seconds: number;
  occurred_at: string;
}

/** Attempts at `items` recorded through the API by the learner; each differs in score and duration. */
async function attempt(learner: TestUser, items: string[]): Promise<SentAttempt[]> {
  const at = Math.floor(Date.now() / 1000) * 1000 - 120_000;
  const attempts = items.map((id, i) => ({
    id: crypto.randomUUID(),
    training_item_id: id,
    score: i % 4 === 3 ? 0.75 : 1,
    correct: true,
    duration_seconds: i % 2 === 0 ? 30 : 125,
    occurred_at: new Date(at + i * 1000).toISOString().replace(".000Z", "Z"),
  }));
  const { res, body } = await callJson("/api/progress/attempts", {
    token: learner.token,
    body: { attempts },
  });
  if (res.status !== 200) throw new Error(`attempts: ${res.status} ${JSON.stringify(body)}`);
  return attempts;
}

/**
 * A learner's whole journey through `c`, recorded through the API: two items first (the first lesson
 * in progress), then — once `firstArrived` says their statements reached the LRS — the rest (both
 * lessons and the course completed, A1 reached in reading). Progress is read when the statements are
 * built, so the second request waits: a lesson completed meanwhile is no longer in progress.
 */
async function journey(learner: TestUser, c: CourseFixture, firstArrived: () => Promise<unknown>) {
  const first = await attempt(learner, c.items.slice(0, 2));
  await firstArrived();
  const rest = await attempt(learner, c.items.slice(2));
  return [...first, ...rest];
}

/**
 * How many statements the learner's activity makes for an endpoint forwarding everything, from what
 * the events API says happened: an attempt each, `progressed` steps, each lesson and course completed,
 * each achievement, each CEFR level that rose.
 */
async function expectedStatements(t: Tenant, attempts: number, progressed: number): Promise<number> {
  const { body } = await api(t.admin, "/api/integrations/events?per_page=100");
  const mine = (body.data as { type: string; data: Record<string, any> }[]).filter(
    (e) => e.data.user_id === t.learner.id,
  );
  const counted = mine.filter(
    (e) =>
      ["lesson.completed", "course.completed", "achievement.unlocked"].includes(e.type) ||
      (e.type === "cefr.level_changed" &&
        e.data.to !== null &&
        (e.data.from === null || e.data.to > e.data.from)),
  );
  return attempts + progressed + counted.length;
}

const verbOf = (s: StoredStatement) => (s.statement.verb as { id: string }).id;
const objectOf = (s: StoredStatement) => s.statement.object as { id: string; definition: any };

/** Every POST /statements the LRS received was accepted (200): nothing refused, nothing conflicting. */
async function everyPostAccepted(lrs: Lrs): Promise<LrsRequest[]> {
  const posts = await lrs.posts();
  expect(posts.length).toBeGreaterThan(0);
  for (const post of posts) expect(post.status, post.body.slice(0, 2000)).toBe(200);
  return posts;
}

/** The LRS stored each id of the forwarding log exactly once, and nothing else. */
async function storedOnce(lrs: Lrs, entries: LogEntry[]) {
  const stored = await lrs.statements();
  expect(stored.map((s) => s.id).sort()).toEqual(entries.map((e) => e.id).sort());
  const posted = await lrs.posted();
  for (const e of entries) expect(posted[e.id], e.id).toBe(1);
  return stored;
}

describe("a member's activity reaches a strict LRS as valid statements", () => {
  it("Basic, xAPI 1.0.3: every verb, in batches of at most 50, with the version header and the credentials", async () => {
    const t = await createTenant();
    const lrs = await createLrs({
      versions: ["1.0.3"],
      basic: { username: "acme-lrs", password: "pa:ss word" },
    });
    const endpoint = await register(t, {
      endpoint: lrs.endpoint,
      auth: basicAuth({ username: "acme-lrs", password: "pa:ss word" }),
    });
    expect(endpoint.version).toBe("1.0.3");
    const c = await course();
    const attempts = await journey(t.learner, c, () => settled(t, endpoint.id, 4));
    const expected = await expectedStatements(t, attempts.length, 1);

    const entries = await settled(t, endpoint.id, expected);
    expect(entries).toHaveLength(expected);
    expect(entries.every((e) => e.status === "sent" && e.attempts === 1 && e.last_error === null)).toBe(true);
    const posts = await everyPostAccepted(lrs);
    const stored = await storedOnce(lrs, entries);

    // Batches: at most 50 statements per request, each with the version header and the credentials.
    for (const post of posts) {
      expect(post.statement_ids.length).toBeGreaterThan(0);
      expect(post.statement_ids.length).toBeLessThanOrEqual(50);
      expect(post.version).toBe("1.0.3");
      expect(post.headers.authorization).toBe(basicHeader("acme-lrs", "pa:ss word"));
      expect(post.headers["content-type"]).toMatch(/^application\/json/);
    }
    // More than 50 statements were made at once: one full batch, and the rest in another.
    expect(posts.map((p) => p.statement_ids.length)).toContain(50);

    // Every verb of the profile, as many as happened.
    const byVerb = (iri: string) => stored.filter((s) => verbOf(s) === iri);
    expect(byVerb(`${ADL}answered`)).toHaveLength(attempts.length);
    expect(byVerb(`${ADL}progressed`).map((s) => objectOf(s).id)).toEqual([
      `${base()}/xapi/activities/lessons/${c.lessons[0]!.id}`,
    ]);
    expect(
      byVerb(`${ADL}completed`)
        .map((s) => objectOf(s).id)
        .sort(),
    ).toEqual(
      [
        `${base()}/xapi/activities/courses/${c.courseId}`,
        ...c.lessons.map((l) => `${base()}/xapi/activities/lessons/${l.id}`),
      ].sort(),
    );
    expect(byVerb(`${ADL}mastered`).map((s) => objectOf(s).id)).toContain(
      `${base()}/xapi/activities/cefr/reading/A1`,
    );
    expect(byVerb(`${base()}/xapi/profile#earned`).map((s) => objectOf(s).id)).toEqual(
      expect.arrayContaining(
        ["first_steps", "first_lesson", "course_complete"].map(
          (code) => `${base()}/xapi/activities/achievements/${code}`,
        ),
      ),
    );
    // The forwarding log names the same verbs and activities.
    const logged = new Map(entries.map((e) => [e.id, e]));
    for (const s of stored) {
      expect(logged.get(s.id)?.activity).toBe(objectOf(s).id);
      expect(logged.get(s.id)?.user_id).toBe(t.learner.id);
    }

    // An attempt as its statement: the learner's opaque account, the item as an interaction of its
    // type, the result, the lesson and the course around it, when it happened.
    for (const sent of attempts) {
      const s = byVerb(`${ADL}answered`).find(
        (x) => objectOf(x).id === `${base()}/xapi/activities/training-items/${sent.training_item_id}`,
      );
      expect(s, sent.training_item_id).toBeDefined();
      const lesson = c.lessons.find((l) => l.items.some((i) => i.id === sent.training_item_id))!;
      expect(s!.statement).toMatchObject({
        actor: { objectType: "Agent", account: { homePage: base(), name: t.learner.id } },
        verb: { display: { "en-US": "answered" } },
        object: {
          objectType: "Activity",
          definition: { type: "http://adlnet.gov/expapi/activities/cmi.interaction" },
        },
        result: {
          success: true,
          score: { scaled: sent.score, raw: sent.score * 100, min: 0, max: 100 },
          duration: sent.duration_seconds === 30 ? "PT30S" : "PT2M5S",
        },
        context: {
          platform: "Lingua",
          language: "es",
          contextActivities: {
            parent: [{ id: `${base()}/xapi/activities/lessons/${lesson.id}` }],
            grouping: [{ id: `${base()}/xapi/activities/courses/${c.courseId}` }],
          },
          extensions: {
            [`${base()}/xapi/profile#cefr-level`]: "A1",
            [`${base()}/xapi/profile#skill`]: "reading",
          },
        },
        timestamp: sent.occurred_at,
      });
      expect(s!.statement).not.toHaveProperty("actor.mbox");
      expect(s!.statement).not.toHaveProperty("stored");
      expect(s!.statement).not.toHaveProperty("authority");
    }
    // Every item type, with its interaction type.
    const interactions = new Set(
      byVerb(`${ADL}answered`).map((s) => objectOf(s).definition.interactionType as string),
    );
    expect([...interactions].sort()).toEqual(["choice", "fill-in", "long-fill-in", "matching", "other"]);

    expect(await health(t, endpoint.id)).toEqual({
      sent_24h: entries.length,
      failed_24h: 0,
      pending: 0,
      last_success_at: expect.any(String),
      last_error_at: null,
      last_error: null,
      failing_since: null,
    });
    // The log's filters.
    expect((await log(t, endpoint.id, "&status=sent")).length).toBe(entries.length);
    expect(await log(t, endpoint.id, "&status=failed")).toEqual([]);
    expect((await log(t, endpoint.id, "&verb=completed")).map((e) => e.activity).sort()).toEqual(
      byVerb(`${ADL}completed`)
        .map((s) => objectOf(s).id)
        .sort(),
    );
  });

  it("OAuth 2, xAPI 2.0.0: a bearer token from the LRS's own token endpoint, reused; new credentials apply to the very next send", async () => {
    const t = await createTenant();
    const oauth2 = { client_id: "lingua-acme", client_secret: "first-secret", scope: "statements/write" };
    const lrs = await createLrs({ versions: ["2.0.0"], oauth2 });
    const endpoint = await register(t, {
      endpoint: lrs.endpoint,
      version: "2.0.0",
      auth: { type: "oauth2", token_url: lrs.tokenUrl, ...oauth2 },
    });
    const c = await course();
    await attempt(t.learner, c.items.slice(0, 2));
    const first = await settled(t, endpoint.id, 4);
    await attempt(t.learner, c.items.slice(2, 4));
    const second = await settled(t, endpoint.id, first.length + 2);
    expect(second.every((e) => e.status === "sent")).toBe(true);
    let posts = await everyPostAccepted(lrs);
    for (const post of posts) {
      expect(post.version).toBe("2.0.0");
      expect(post.auth?.type).toBe("bearer");
    }
    // One token for both sends: cached until shortly before it expires.
    expect(await lrs.tokensIssued()).toBe(1);
    const tokenRequests = (await lrs.requests()).filter((r) => r.path === "/oauth/token");
    expect(tokenRequests.map((r) => r.auth)).toEqual([
      { type: "basic", username: "lingua-acme", password: "first-secret" },
    ]);

    // The LRS rotates the client's secret and revokes its tokens; the admin PUTs the new secret.
    await lrs.configure({
      oauth2: { ...oauth2, client_secret: "second-secret" },
      expire_tokens: true,
      reset: false,
    });
    const put = await api<Endpoint>(t.admin, `${BASE_PATH}/${endpoint.id}`, {
      method: "PUT",
      body: {
        name: "Our LRS",
        endpoint: lrs.endpoint,
        version: "2.0.0",
        auth: { type: "oauth2", token_url: lrs.tokenUrl, ...oauth2, client_secret: "second-secret" },
      },
    });
    expect(put.res.status).toBe(200);
    const before = (await lrs.requests()).length;
    await attempt(t.learner, c.items.slice(4, 6));
    const third = await settled(t, endpoint.id, second.length + 2);
    expect(third.every((e) => e.status === "sent" && e.attempts === 1)).toBe(true);
    // The very next send asked for a token with the new secret and used it: no refused request.
    const after = (await lrs.requests()).slice(before);
    expect(after[0]).toMatchObject({
      path: "/oauth/token",
      status: 200,
      auth: { type: "basic", username: "lingua-acme", password: "second-secret" },
    });
    expect(after.every((r) => r.status === 200)).toBe(true);
    posts = await everyPostAccepted(lrs);
    await storedOnce(lrs, third);
    expect(await lrs.tokensIssued()).toBe(2);
    expect((await health(t, endpoint.id)).last_error).toBeNull();
  });

  it("a new Basic password through PUT is what the very next send carries", async () => {
    const t = await createTenant();
    const lrs = await createLrs({ basic: { username: "lingua", password: "old-password" } });
    const endpoint = await register(t, {
      endpoint: lrs.endpoint,
      auth: basicAuth({ username: "lingua", password: "old-password" }),
    });
    const c = await course();
    await attempt(t.learner, c.items.slice(0, 2));
    const first = await settled(t, endpoint.id, 4);

    await lrs.configure({ basic: { username: "lingua-2", password: "new-password" }, reset: false });
    const put = await api(t.admin, `${BASE_PATH}/${endpoint.id}`, {
      method: "PUT",
      body: {
        name: "Our LRS",
        endpoint: lrs.endpoint,
        auth: basicAuth({ username: "lingua-2", password: "new-password" }),
      },
    });
    expect(put.res.status).toBe(200);
    const before = (await lrs.posts()).length;
    await attempt(t.learner, c.items.slice(2, 4));
    const all = await settled(t, endpoint.id, first.length + 2);
    expect(all.every((e) => e.status === "sent" && e.attempts === 1)).toBe(true);
    const after = (await everyPostAccepted(lrs)).slice(before);
    expect(after.length).toBeGreaterThan(0);
    for (const post of after)
      expect(post.headers.authorization).toBe(basicHeader("lingua-2", "new-password"));
    await storedOnce(lrs, all);
  });
});

describe("what each endpoint of an institution receives", () => {
  it("mbox actors, the activities filter, and nothing for a disabled or deleted endpoint", async () => {
    const t = await createTenant();
    const [everything, filtered, disabled, deleted] = await Promise.all([
      createLrs(),
      createLrs(),
      createLrs(),
      createLrs(),
    ]);
    const mbox = await register(t, {
      endpoint: everything.endpoint,
      auth: basicAuth(),
      actor_format: "mbox",
    });
    const some = await register(t, {
      endpoint: filtered.endpoint,
      auth: basicAuth(),
      activities: ["completed", "mastered"],
    });
    const off = await register(t, { endpoint: disabled.endpoint, auth: basicAuth(), enabled: false });
    const gone = await register(t, { endpoint: deleted.endpoint, auth: basicAuth() });
    expect((await api(t.admin, `${BASE_PATH}/${gone.id}`, { method: "DELETE" })).res.status).toBe(204);

    const c = await course();
    const attempts = await journey(t.learner, c, () => settled(t, mbox.id, 4));
    const expected = await expectedStatements(t, attempts.length, 1);
    const all = await settled(t, mbox.id, expected);
    expect(all).toHaveLength(expected);
    const chosen = await settled(t, some.id, 4);
    await everyPostAccepted(everything);
    await everyPostAccepted(filtered);

    // mbox: the member's e-mail, as a mailto IRI, and no account.
    const storedAll = await storedOnce(everything, all);
    for (const s of storedAll) {
      expect(s.statement.actor).toEqual({
        objectType: "Agent",
        name: "Test learner",
        mbox: `mailto:${t.learner.email}`,
      });
    }
    // The filter: completed and mastered only, with the default account actor.
    const storedChosen = await storedOnce(filtered, chosen);
    expect(new Set(storedChosen.map(verbOf))).toEqual(new Set([`${ADL}completed`, `${ADL}mastered`]));
    expect(new Set(chosen.map((e) => e.verb))).toEqual(new Set(["completed", "mastered"]));
    for (const s of storedChosen)
      expect(s.statement.actor).toEqual({
        objectType: "Agent",
        name: "Test learner",
        account: { homePage: base(), name: t.learner.id },
      });
    // One activity, two endpoints: two statement ids.
    const completedCourse = (entries: LogEntry[]) =>
      entries.find((e) => e.activity === `${base()}/xapi/activities/courses/${c.courseId}`)!.id;
    expect(completedCourse(all)).not.toBe(completedCourse(chosen));

    // Disabled and deleted: not a request.
    expect(await disabled.requests()).toEqual([]);
    expect(await deleted.requests()).toEqual([]);
    expect(await log(t, off.id)).toEqual([]);
    expect(await health(t, off.id)).toMatchObject({ sent_24h: 0, pending: 0, last_success_at: null });
    expect((await api(t.admin, `${BASE_PATH}/${gone.id}/statements`)).res.status).toBe(404);
  });
});

describe("the forwarding log and health say what happened", () => {
  it("a statement the LRS refused is failed with its message, the others sent; a 503 in between is retried", async () => {
    const t = await createTenant();
    const refusal = '{"error":"invalid_statement","message":"statement refused by policy"}';
    const lrs = await createLrs({
      script: [
        { status: 503, retry_after: 1 },
        { status: 400, body: refusal },
        { status: 400, body: refusal },
      ],
    });
    const endpoint = await register(t, { endpoint: lrs.endpoint, auth: basicAuth() });
    const c = await course();
    await attempt(t.learner, c.items.slice(0, 3));
    // 3 answered, the lesson's progress, first_steps: one batch.
    const entries = await settled(t, endpoint.id, 5);
    const failed = entries.filter((e) => e.status === "failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ attempts: 3, last_error: `HTTP 400: ${refusal}`, sent_at: null });
    const sent = entries.filter((e) => e.status === "sent");
    expect(sent).toHaveLength(4);
    for (const e of sent)
      expect(e).toMatchObject({ attempts: 3, last_error: null, sent_at: expect.any(String) });

    // The LRS: a 503, the batch refused, the first statement alone refused, the others one by one.
    const posts = await lrs.posts();
    expect(posts.map((p) => p.status)).toEqual([503, 400, 400, 200, 200, 200, 200]);
    expect(posts[2]!.statement_ids).toEqual([failed[0]!.id]);
    expect((await lrs.statements()).map((s) => s.id).sort()).toEqual(sent.map((e) => e.id).sort());

    expect(await health(t, endpoint.id)).toEqual({
      sent_24h: 4,
      failed_24h: 1,
      pending: 0,
      last_success_at: expect.any(String),
      last_error_at: expect.any(String),
      last_error: `HTTP 400: ${refusal}`,
      failing_since: null,
    });
    expect((await log(t, endpoint.id, "&status=failed")).map((e) => e.id)).toEqual([failed[0]!.id]);
  });
});
