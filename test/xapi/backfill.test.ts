import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { users, xapiBackfills } from "../../src/db/schema";
import type { getXapiBackfillRoute } from "../../src/domains/xapi/backfill/routes/get-backfill";
import type { listXapiBackfillsRoute } from "../../src/domains/xapi/backfill/routes/list-backfills";
import type { startXapiBackfillRoute } from "../../src/domains/xapi/backfill/routes/start-backfill";
import { forwardEvents } from "../../src/domains/xapi/delivery/subscriber";
import { statementId } from "../../src/domains/xapi/statements";
import { database } from "../../src/platform/db";
import { resetClock } from "../../src/platform/service/clock";
import { runSweeps } from "../../src/scheduled";
import { HeldQueue } from "../exports/support";
import { type CallOptions, callJson, type ResponseBody } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createLrs, LRS_BASIC, type Lrs } from "../helpers/lrs";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant, insertUser, signIn, type Tenant, type TestUser } from "../helpers/tenants";
import { runQueue, waitUntil } from "../webhooks/support";
import { dispatched, outboxOfUser, statementsOf } from "./support";

// The back-fill over HTTP, as an integrator uses it, against the strict loopback LRS
// (test/helpers/lrs-server.ts). The queues are the real ones unless a test holds the back-fill
// queue's messages to hand them to the consumer itself (a lost message, a chunked job).

type Backfill = ResponseBody<typeof getXapiBackfillRoute, 200>;
type Started = ResponseBody<typeof startXapiBackfillRoute, 202>;
type BackfillPage = ResponseBody<typeof listXapiBackfillsRoute, 200>;

const BASE_PATH = "/api/integrations/xapi-endpoints";
const BACKFILL_QUEUE = "lingua-xapi-backfills";
const BACKFILL_DLQ = "lingua-xapi-backfills-dlq";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const db = () => database(env.DB);

afterEach(() => resetClock());

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function api<T = any>(t: Tenant, path: string, options: CallOptions = {}) {
  return callJson<T>(path, { token: t.admin.token, ...options });
}

function endpointBody(lrs: Lrs, extra: Record<string, unknown> = {}) {
  return {
    name: "Learning Locker",
    endpoint: lrs.endpoint,
    auth: { type: "basic", ...LRS_BASIC },
    ...extra,
  };
}

interface Registered {
  lrs: Lrs;
  endpointId: string;
  activities?: string[];
}

/** An endpoint registered through the API, its LRS a fresh strict loopback instance. */
async function register(
  t: Tenant,
  options: { enabled?: boolean; activities?: string[] } = {},
): Promise<Registered> {
  const lrs = await createLrs();
  const { res, body } = await api(t, BASE_PATH, { body: endpointBody(lrs, options) });
  expect(res.status, JSON.stringify(body)).toBe(201);
  return { lrs, endpointId: body.id as string, activities: options.activities };
}

/** Switches the endpoint on or off (PUT replaces it whole: its activities are sent again). */
async function setEnabled(t: Tenant, endpoint: Registered, enabled: boolean) {
  const extra = endpoint.activities ? { enabled, activities: endpoint.activities } : { enabled };
  const { res, body } = await api(t, `${BASE_PATH}/${endpoint.endpointId}`, {
    method: "PUT",
    body: endpointBody(endpoint.lrs, extra),
  });
  expect(res.status, JSON.stringify(body)).toBe(200);
}

/** Another learner of the institution, signed in. */
async function anotherLearner(t: Tenant): Promise<TestUser> {
  const { id, email } = await insertUser("learner", t.institution.id);
  return { id, email, role: "learner", ...(await signIn(email)) };
}

function startBackfill(t: Tenant, endpointId: string, body: unknown, bindings?: Partial<Cloudflare.Env>) {
  return api<Started>(t, `${BASE_PATH}/${endpointId}/backfill`, { body, env: bindings });
}

async function getBackfill(t: Tenant, endpointId: string, id: string): Promise<Backfill> {
  const { res, body } = await api<Backfill>(t, `${BASE_PATH}/${endpointId}/backfills/${id}`);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function waitForBackfill(t: Tenant, endpointId: string, id: string): Promise<Backfill> {
  return waitUntil(async () => {
    const b = await getBackfill(t, endpointId, id);
    return b.status === "completed" || b.status === "failed" ? b : null;
  }, 30_000);
}

/** Starts a back-fill through the real queue and waits for it to end. */
async function backfillAndWait(t: Tenant, endpointId: string, since: string): Promise<Backfill> {
  const { res, body } = await startBackfill(t, endpointId, { since });
  expect(res.status, JSON.stringify(body)).toBe(202);
  return waitForBackfill(t, endpointId, body.id);
}

/** Waits until every statement stored for the endpoint is settled (sent or failed). */
async function settled(endpointId: string, count?: number) {
  return waitUntil(async () => {
    const rows = await statementsOf(endpointId);
    const enough = count === undefined ? rows.length > 0 : rows.length >= count;
    return enough && rows.every((s) => s.status !== "pending") ? rows : null;
  }, 30_000);
}

/** Attempts at the first `count` items of `items`, recorded through the API with ids chosen here. */
async function record(
  learner: TestUser,
  items: string[],
  ids: string[] = items.map(() => crypto.randomUUID()),
) {
  const occurredAt = ago(60_000);
  const body = {
    attempts: items.map((training_item_id, i) => ({
      id: ids[i],
      training_item_id,
      score: 1,
      correct: true,
      duration_seconds: 20,
      occurred_at: occurredAt,
    })),
  };
  const { res, body: answer } = await callJson("/api/progress/attempts", { token: learner.token, body });
  expect(res.status, JSON.stringify(answer)).toBe(200);
  return ids;
}

/**
 * A learner's rich history: one course completed (2 lessons of 5 reading items at A1: enough evidence
 * for the level), one lesson half done.
 */
async function history(learner: TestUser) {
  const done = await createPublishedCourse({
    lessons: 2,
    blocksPerLesson: 1,
    itemsPerBlock: 5,
    skills: ["reading"],
    levels: ["A1"],
  });
  const half = await createPublishedCourse({
    lessons: 1,
    blocksPerLesson: 1,
    itemsPerBlock: 4,
    skills: ["reading"],
    levels: ["A1"],
  });
  const attemptIds = [
    ...(await record(learner, done.items)),
    ...(await record(learner, half.items.slice(0, 2))),
  ];
  return { attemptIds };
}

/** How many POST requests to the LRS carried each statement id, for ids carried more than once. */
async function sentTwice(lrs: Lrs): Promise<Record<string, number>> {
  return Object.fromEntries(Object.entries(await lrs.posted()).filter(([, n]) => n > 1));
}

async function sweep(scheduledTime: number, bindings: Cloudflare.Env) {
  const ctx = createExecutionContext();
  await runSweeps(bindings, ctx, scheduledTime);
  await waitOnExecutionContext(ctx);
}

async function backfillRow(id: string) {
  return db().select().from(xapiBackfills).where(eq(xapiBackfills.id, id)).get();
}

describe("back-filling an endpoint", () => {
  it("forwards activity recorded while the endpoint was disabled: every statement arrives once, valid, with the live path's ids", async () => {
    const tenant = await createTenant();
    const reg = await register(tenant, { enabled: false });
    const { lrs, endpointId } = reg;
    const { attemptIds } = await history(tenant.learner);
    await dispatched(tenant.learner.id);
    // Disabled: nothing was made for it, nothing sent.
    expect(await statementsOf(endpointId)).toEqual([]);
    expect(await lrs.posts()).toEqual([]);

    await setEnabled(tenant, reg, true);
    const since = ago(HOUR);
    const { res, body } = await startBackfill(tenant, endpointId, { since });
    expect(res.status, JSON.stringify(body)).toBe(202);
    expect(res.headers.get("Location")).toBe(
      `https://api.lingua.test${BASE_PATH}/${endpointId}/backfills/${body.id}`,
    );
    expect(body).toEqual({
      id: expect.stringMatching(/^xbf_/),
      endpoint_id: endpointId,
      since: `${since.slice(0, 19)}Z`,
      until: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      status: "queued",
      statements_queued: 0,
      error: null,
      created_at: body.until,
      completed_at: null,
    });

    const done = await waitForBackfill(tenant, endpointId, body.id);
    expect(done).toMatchObject({ status: "completed", error: null, completed_at: expect.any(String) });
    const rows = await settled(endpointId);
    expect(done.statements_queued).toBe(rows.length);
    expect(rows.every((s) => s.status === "sent")).toBe(true);

    // Every kind of activity: each attempt, the two lessons and the course completed, the half-done
    // lesson's progress, the achievements and each CEFR level reached.
    const verbs = rows.map((s) => s.verb);
    expect(verbs.filter((v) => v === "answered")).toHaveLength(attemptIds.length);
    expect(verbs.filter((v) => v === "completed")).toHaveLength(3);
    expect(verbs.filter((v) => v === "progressed")).toHaveLength(1);
    expect(verbs.filter((v) => v === "earned").length).toBeGreaterThan(0);
    const rises = (await outboxOfUser(tenant.learner.id)).filter((e) => e.type === "cefr.level_changed");
    expect(rises.length).toBeGreaterThan(0);
    expect(verbs.filter((v) => v === "mastered")).toHaveLength(rises.length);
    for (const id of attemptIds)
      expect(rows.map((s) => s.id)).toContain(await statementId(endpointId, `answered:${id}`));

    // The strict LRS stored each one (it answers 400 for an invalid statement), once.
    const stored = await lrs.statements();
    expect(stored.map((s) => s.id).sort()).toEqual(rows.map((s) => s.id).sort());
    expect(await sentTwice(lrs)).toEqual({});

    // The live path makes the very same ids: the learner's events offered again make nothing new.
    const events = await outboxOfUser(tenant.learner.id);
    await forwardEvents(
      testContext(),
      events.map((e) => e.id),
    );
    expect((await statementsOf(endpointId)).length).toBe(rows.length);

    // A second back-fill over the same window finds everything forwarded: nothing queued, nothing sent.
    const again = await backfillAndWait(tenant, endpointId, since);
    expect(again).toMatchObject({ status: "completed", statements_queued: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect((await lrs.statements()).length).toBe(stored.length);
    expect(await sentTwice(lrs)).toEqual({});

    const { body: list } = await api<BackfillPage>(tenant, `${BASE_PATH}/${endpointId}/backfills`);
    expect(list.data.map((b) => b.id)).toEqual([again.id, done.id]);
    expect(list.meta.total).toBe(2);
  }, 90_000);

  it("forwards only the activities the endpoint wants, of current members, within the window", async () => {
    const tenant = await createTenant();
    const reg = await register(tenant, { enabled: false, activities: ["answered"] });
    const { lrs, endpointId } = reg;
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3 });
    const ids = await record(tenant.learner, course.items.slice(0, 2));
    // Another learner's attempts are a current member's; then that learner leaves the institution.
    const leaver = await anotherLearner(tenant);
    const former = await record(leaver, course.items.slice(0, 1));
    await dispatched(tenant.learner.id);
    await dispatched(leaver.id);
    await db().update(users).set({ institutionId: null }).where(eq(users.id, leaver.id));
    await setEnabled(tenant, reg, true);

    // The learner's two attempts; not the former member's, nor anything but `answered`.
    const early = await backfillAndWait(tenant, endpointId, ago(DAY));
    expect(early.statements_queued).toBe(2);
    const rows = await settled(endpointId, 2);
    expect(rows.map((s) => s.verb)).toEqual(["answered", "answered"]);
    expect(rows.map((s) => s.userId)).toEqual([tenant.learner.id, tenant.learner.id]);
    const expected = await Promise.all(ids.map((id) => statementId(endpointId, `answered:${id}`)));
    expect(rows.map((s) => s.id).sort()).toEqual(expected.sort());
    expect(rows.map((s) => s.id)).not.toContain(await statementId(endpointId, `answered:${former[0]}`));
    expect((await lrs.statements()).length).toBe(2);

    // A window starting after the attempts: nothing more.
    const later = await backfillAndWait(tenant, endpointId, ago(1000));
    expect(later.statements_queued).toBe(0);
  }, 60_000);

  it("after an outage, sends the failed statements again — but not the one the LRS rejected itself", async () => {
    const tenant = await createTenant();
    const reg = await register(tenant, { activities: ["answered"] });
    const { lrs, endpointId } = reg;
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 6 });
    // First: the LRS rejects one statement (400): it is failed for good, the others are sent.
    const firstIds = [crypto.randomUUID(), crypto.randomUUID()];
    const rejected = await statementId(endpointId, `answered:${firstIds[0]}`);
    await lrs.configure({ reject: { [rejected]: "not a statement we take" } });
    await record(tenant.learner, course.items.slice(0, 2), firstIds);
    await settled(endpointId, 2);
    // Then an outage: every request answers 503 until the statements are given up.
    await lrs.configure({
      reject: { [rejected]: "not a statement we take" },
      script: [{ status: 503, times: 1000 }],
      reset: false,
    });
    const outageIds = await record(tenant.learner, course.items.slice(2, 6));
    const failedRows = await settled(endpointId, 6);
    const outage = await Promise.all(outageIds.map((id) => statementId(endpointId, `answered:${id}`)));
    const byId = new Map(failedRows.map((s) => [s.id, s]));
    for (const id of outage)
      expect(byId.get(id)).toMatchObject({ status: "failed", lastError: expect.stringMatching(/^HTTP 503/) });
    expect(byId.get(rejected)).toMatchObject({
      status: "failed",
      lastError: expect.stringMatching(/^HTTP 400/),
    });
    const rejectedPosts = (await lrs.posted())[rejected];

    // The LRS is back.
    await lrs.configure({ reject: { [rejected]: "not a statement we take" }, script: [], reset: false });
    const done = await backfillAndWait(tenant, endpointId, ago(HOUR));
    expect(done).toMatchObject({ status: "completed", statements_queued: 4 });
    const rows = await settled(endpointId, 6);
    const after = new Map(rows.map((s) => [s.id, s]));
    for (const id of outage) expect(after.get(id)).toMatchObject({ status: "sent", lastError: null });
    expect(after.get(rejected)).toMatchObject({ status: "failed" });
    expect((await lrs.posted())[rejected]).toBe(rejectedPosts);
    const stored = (await lrs.statements()).map((s) => s.id);
    for (const id of outage) expect(stored.filter((s) => s === id)).toHaveLength(1);
  }, 90_000);
});

describe("starting a back-fill", () => {
  it("refuses a window older than 90 days, in the future or malformed, and a disabled endpoint; nothing is queued", async () => {
    const tenant = await createTenant();
    const reg = await register(tenant);
    const { endpointId } = reg;
    const queue = new HeldQueue();
    const bindings = { XAPI_BACKFILL_QUEUE: queue as unknown as Queue };
    for (const [since, message] of [
      [ago(91 * DAY), "must be within the last 90 days"],
      [new Date(Date.now() + HOUR).toISOString(), "must not be in the future"],
      ["yesterday", "must be an ISO 8601 date-time"],
    ] as const) {
      const { res, body } = await startBackfill(tenant, endpointId, { since }, bindings);
      expect(res.status, since).toBe(422);
      expect(body).toMatchObject({ code: "validation_failed", errors: [{ path: "since", message }] });
    }
    const unknown = await startBackfill(tenant, endpointId, { since: ago(HOUR), until: ago(0) }, bindings);
    expect(unknown.res.status).toBe(422);
    const missing = await startBackfill(tenant, endpointId, {}, bindings);
    expect(missing.res.status).toBe(422);

    await setEnabled(tenant, reg, false);
    const disabled = await startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings);
    expect(disabled.res.status).toBe(409);
    expect(disabled.body).toMatchObject({ code: "xapi_endpoint_disabled", status: 409 });

    expect(queue.messages).toEqual([]);
    const { body: list } = await api<BackfillPage>(tenant, `${BASE_PATH}/${endpointId}/backfills`);
    expect(list.data).toEqual([]);
    await setEnabled(tenant, reg, true);
    // 90 days ago (less a minute), with an offset: accepted, and kept in UTC to the second.
    const edgeMs = Date.now() - 90 * DAY + 60_000;
    const withOffset = new Date(edgeMs + 2 * HOUR).toISOString().replace("Z", "+02:00");
    const edge = await startBackfill(tenant, endpointId, { since: withOffset }, bindings);
    expect(edge.res.status).toBe(202);
    expect(edge.body.since).toBe(`${new Date(edgeMs).toISOString().slice(0, 19)}Z`);
  });

  it("runs one back-fill at a time per endpoint: a second, even concurrent, is 409 naming the first", async () => {
    const tenant = await createTenant();
    const { endpointId } = await register(tenant);
    const other = await register(tenant);
    const queue = new HeldQueue();
    const bindings = { XAPI_BACKFILL_QUEUE: queue as unknown as Queue };
    const both = await Promise.all([
      startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings),
      startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings),
    ]);
    const statuses = both.map((r) => r.res.status).sort();
    expect(statuses).toEqual([202, 409]);
    const first = both.find((r) => r.res.status === 202)!.body;
    const refused = both.find((r) => r.res.status === 409)!.body as unknown as Record<string, unknown>;
    expect(refused).toMatchObject({ code: "xapi_backfill_in_progress", backfill_id: first.id });
    expect(queue.messages).toEqual([{ backfill_id: first.id, generation: 0 }]);
    // Another endpoint is not held up.
    expect((await startBackfill(tenant, other.endpointId, { since: ago(HOUR) }, bindings)).res.status).toBe(
      202,
    );

    // Once the first is done, the endpoint can be back-filled again.
    while (queue.messages.length > 0) await runQueue(BACKFILL_QUEUE, [queue.take()], bindings);
    expect((await getBackfill(tenant, endpointId, first.id)).status).toBe("completed");
    expect((await startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings)).res.status).toBe(202);
  });

  it("replays the first answer for the same Idempotency-Key", async () => {
    const tenant = await createTenant();
    const { endpointId } = await register(tenant);
    const queue = new HeldQueue();
    const bindings = { XAPI_BACKFILL_QUEUE: queue as unknown as Queue };
    const key = crypto.randomUUID();
    const body = { since: ago(HOUR) };
    const first = await api(tenant, `${BASE_PATH}/${endpointId}/backfill`, {
      body,
      headers: { "Idempotency-Key": key },
      env: bindings,
    });
    const second = await api(tenant, `${BASE_PATH}/${endpointId}/backfill`, {
      body,
      headers: { "Idempotency-Key": key },
      env: bindings,
    });
    expect(first.res.status).toBe(202);
    expect(second.res.status).toBe(202);
    expect(second.body).toEqual(first.body);
    expect(queue.messages).toHaveLength(1);
  });

  it("another institution's endpoint or back-fill is 404", async () => {
    const [acme, foreign] = await Promise.all([createTenant(), createTenant()]);
    const { endpointId } = await register(acme);
    const mine = await register(foreign);
    const queue = new HeldQueue();
    const bindings = { XAPI_BACKFILL_QUEUE: queue as unknown as Queue };
    const started = await startBackfill(acme, endpointId, { since: ago(HOUR) }, bindings);
    expect(started.res.status).toBe(202);
    const id = started.body.id;
    for (const [path, options] of [
      [`${BASE_PATH}/${endpointId}/backfill`, { body: { since: ago(HOUR) } }],
      [`${BASE_PATH}/${endpointId}/backfills`, {}],
      [`${BASE_PATH}/${endpointId}/backfills/${id}`, {}],
      [`${BASE_PATH}/${mine.endpointId}/backfills/${id}`, {}],
    ] as const) {
      const { res, body } = await api(foreign, path, { ...options, env: bindings });
      expect(res.status, path).toBe(404);
      expect(body.code).toBe("not_found");
    }
    expect(queue.messages).toHaveLength(1);
  });
});

describe("the back-fill job", () => {
  it("goes chunk by chunk, a checkpoint and a new message each, and queues every statement once", async () => {
    const tenant = await createTenant();
    const reg = await register(tenant, { enabled: false, activities: ["answered"] });
    const { lrs, endpointId } = reg;
    // 50 attempts: with 20 rows a chunk (vitest.config.ts) and a 1 ms budget, three chunks of attempts.
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 50 });
    const ids = await record(tenant.learner, course.items);
    await dispatched(tenant.learner.id);
    await setEnabled(tenant, reg, true);
    const queue = new HeldQueue();
    const bindings = { ...env, XAPI_BACKFILL_QUEUE: queue as unknown as Queue } as Cloudflare.Env;
    const { body: started } = await startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings);

    const seen: { generation: number; source: unknown; queued: number; status: string }[] = [];
    for (let n = 0; queue.messages.length > 0; n++) {
      if (n > 20) throw new Error("too many messages");
      const message = queue.take();
      expect(message).toEqual({ backfill_id: started.id, generation: n });
      const outcome = await runQueue(BACKFILL_QUEUE, [message], bindings);
      expect(outcome.explicitAcks).toHaveLength(1);
      const row = await backfillRow(started.id);
      seen.push({
        generation: row!.generation,
        source: (row!.cursor as { source?: string } | null)?.source ?? null,
        queued: row!.statementsQueued,
        status: row!.status,
      });
      // Between messages nobody holds it.
      expect(row!.leaseId).toBeNull();
    }
    // failed (none) → attempts 20, 40, 50 → done (the other sources are not wanted: not read).
    expect(seen.map((s) => s.queued)).toEqual([0, 20, 40, 50]);
    expect(seen.map((s) => s.status)).toEqual(["running", "running", "running", "completed"]);
    expect(seen.map((s) => s.generation)).toEqual([1, 2, 3, 3]);
    expect(seen.map((s) => s.source)).toEqual(["attempts", "attempts", "attempts", "attempts"]);

    const rows = await settled(endpointId, 50);
    expect(rows).toHaveLength(50);
    const expected = await Promise.all(ids.map((id) => statementId(endpointId, `answered:${id}`)));
    expect(rows.map((s) => s.id).sort()).toEqual(expected.sort());
    expect((await lrs.statements()).length).toBe(50);
    expect(await sentTwice(lrs)).toEqual({});
  }, 60_000);

  it("a lost message: the minute sweep resumes the back-fill about two minutes later, once, and the late original changes nothing", async () => {
    const tenant = await createTenant();
    const reg = await register(tenant, { enabled: false, activities: ["answered"] });
    const { lrs, endpointId } = reg;
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 5 });
    await record(tenant.learner, course.items);
    await dispatched(tenant.learner.id);
    await setEnabled(tenant, reg, true);
    const queue = new HeldQueue();
    const bindings = { ...env, XAPI_BACKFILL_QUEUE: queue as unknown as Queue } as Cloudflare.Env;
    const { body: started } = await startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings);
    const lost = queue.take(); // never delivered

    // Within the grace of its due time the message may still come: nothing is sent.
    await sweep(Date.now() + 30_000, bindings);
    expect(queue.messages.filter((m) => (m as { backfill_id: string }).backfill_id === started.id)).toEqual(
      [],
    );
    // Past it: one new message of the same generation, however many sweeps run at that time.
    const later = Date.now() + 2 * 60_000;
    await Promise.all([sweep(later, bindings), sweep(later, bindings)]);
    // (The sweep resumes this file's other held back-fills too: only this one's messages count.)
    const mine = () =>
      queue.messages.filter((m) => (m as { backfill_id: string }).backfill_id === started.id);
    expect(mine()).toEqual([{ backfill_id: started.id, generation: 0 }]);
    while (mine().length > 0) {
      const next = mine()[0];
      queue.messages = queue.messages.filter((m) => m !== next);
      await runQueue(BACKFILL_QUEUE, [next], bindings);
    }
    const done = await getBackfill(tenant, endpointId, started.id);
    expect(done).toMatchObject({ status: "completed", statements_queued: 5 });

    const before = await backfillRow(started.id);
    const late = await runQueue(BACKFILL_QUEUE, [lost], bindings);
    expect(late.explicitAcks).toHaveLength(1);
    expect(mine()).toEqual([]);
    expect(await backfillRow(started.id)).toEqual(before);
    await settled(endpointId, 5);
    expect((await lrs.statements()).length).toBe(5);
    expect(await sentTwice(lrs)).toEqual({});
  }, 60_000);

  it("a message the queue gave up on fails the back-fill, and the endpoint can be back-filled again", async () => {
    const tenant = await createTenant();
    const { endpointId } = await register(tenant);
    const queue = new HeldQueue();
    const bindings = { ...env, XAPI_BACKFILL_QUEUE: queue as unknown as Queue } as Cloudflare.Env;
    const { body: started } = await startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings);
    const outcome = await runQueue(BACKFILL_DLQ, [queue.take()], bindings);
    expect(outcome.explicitAcks).toHaveLength(1);
    const failed = await getBackfill(tenant, endpointId, started.id);
    expect(failed).toMatchObject({
      status: "failed",
      error: expect.stringContaining("failed on every attempt"),
      completed_at: expect.any(String),
    });
    expect((await startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings)).res.status).toBe(202);
  });

  it("an endpoint disabled while its back-fill waits fails the back-fill, queueing nothing", async () => {
    const tenant = await createTenant();
    const reg = await register(tenant);
    const { endpointId } = reg;
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2 });
    const queue = new HeldQueue();
    const bindings = { ...env, XAPI_BACKFILL_QUEUE: queue as unknown as Queue } as Cloudflare.Env;
    await setEnabled(tenant, reg, false);
    await record(tenant.learner, course.items);
    await dispatched(tenant.learner.id);
    await setEnabled(tenant, reg, true);
    const { body: started } = await startBackfill(tenant, endpointId, { since: ago(HOUR) }, bindings);
    await setEnabled(tenant, reg, false);
    await runQueue(BACKFILL_QUEUE, [queue.take()], bindings);
    expect(await getBackfill(tenant, endpointId, started.id)).toMatchObject({
      status: "failed",
      error: expect.stringContaining("disabled"),
      statements_queued: 0,
    });
    expect(await statementsOf(endpointId)).toEqual([]);
  });
});
