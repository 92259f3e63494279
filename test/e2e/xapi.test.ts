/**
 * xAPI forwarding end to end against a real LRS: Learning Locker's `xapi-statements`
 * (test/e2e/helpers/learning-locker.ts, in memory on loopback, strict: a bad IRI, a score out of
 * range or a missing version header is a 400, a conflicting id a 409) receives what `npm run dev`
 * forwards. The demo institution's owner registers it through the dev server's API (xAPI 1.0.3,
 * which is all Learning Locker speaks; Basic), the test call checks it, the demo learner records
 * attempts through the API, the dev server's local queues build and send the statements, and the
 * test reads them back from Learning Locker.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { conformingFetch, OpenApiConformance } from "../helpers/openapi-conformance";
import { type LearningLocker, startLearningLocker } from "./helpers/learning-locker";
import { readySharedDevServer, type SharedDevServer } from "./helpers/shared-dev-server";

const OWNER_EMAIL = "owner@acme.lingua.test";
const LEARNER_EMAIL = "learner@acme.lingua.test";
const LEARNER_ID = "usr_demo_acme_learner";
const DEMO_PASSWORD = "lingua-demo-2026";
const REQUEST_TIMEOUT_MS = 15_000;
const ADL = "http://adlnet.gov/expapi/verbs/";

let lrs: LearningLocker;
/** The run's one `npm run dev` (test/e2e/helpers/shared-dev-server.ts). */
let dev: SharedDevServer;
let served: Promise<OpenApiConformance> | undefined;
let owner: Record<string, string>;
let learner: Record<string, string>;
let endpointId = "";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request to the dev server; its response must conform to the served OpenAPI document. */
async function request(path: string, init: RequestInit = {}) {
  served ??= fetch(`${dev.url}/api/openapi.json`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    .then((res) => res.json())
    .then((document) => new OpenApiConformance(document));
  const res = await conformingFetch(
    new Request(dev.url + path, init),
    (r) => fetch(r, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
    () => served!,
  );
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { res, text, body };
}

async function signIn(email: string) {
  const r = await request("/api/auth/sign-in", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password: DEMO_PASSWORD }),
  });
  expect(r.res.status, r.text).toBe(200);
  return { Authorization: `Bearer ${r.body.token}`, "Content-Type": "application/json" };
}

interface LogEntry {
  id: string;
  verb: string;
  activity: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

async function forwardingLog(): Promise<LogEntry[]> {
  const r = await request(`/api/integrations/xapi-endpoints/${endpointId}/statements?per_page=100`, {
    headers: owner,
  });
  expect(r.res.status, r.text).toBe(200);
  return r.body.data;
}

/** Polls Learning Locker's GET statements until it holds at least `count`; answers them all. */
async function statementsInLrs(count: number, timeoutMs = 60_000): Promise<Record<string, any>[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${lrs.endpoint}statements?limit=500`, {
      headers: { Authorization: lrs.authorization, "X-Experience-API-Version": "1.0.3" },
    });
    expect(res.status).toBe(200);
    const { statements } = (await res.json()) as { statements: Record<string, any>[] };
    if (statements.length >= count) return statements;
    if (Date.now() > deadline)
      throw new Error(
        `Learning Locker holds ${statements.length} of ${count} statements after ${timeoutMs / 1000} s; its errors: ${lrs.errors.join(" | ")}`,
      );
    await sleep(250);
  }
}

/** Waits until the forwarding log holds at least `count` statements, none pending, and stays so. */
async function settledLog(count: number, timeoutMs = 60_000): Promise<LogEntry[]> {
  const deadline = Date.now() + timeoutMs;
  let previous = -1;
  for (;;) {
    const entries = await forwardingLog();
    const settled = entries.length >= count && entries.every((e) => e.status !== "pending");
    if (settled && entries.length === previous) return entries;
    previous = settled ? entries.length : -1;
    if (Date.now() > deadline)
      throw new Error(`the forwarding log holds ${JSON.stringify(entries.map((e) => [e.verb, e.status]))}`);
    await sleep(settled ? 1_000 : 250);
  }
}

/** A lesson of a demo course the demo learner has not completed, with every item of it. */
async function openLesson(): Promise<{ lesson: string; course: string; items: string[] }> {
  const courses = await request("/api/courses?per_page=100", { headers: learner });
  for (const course of courses.body.data) {
    const progress = await request(`/api/courses/${course.id}/lesson-progress?per_page=100`, {
      headers: learner,
    });
    const open = progress.body.data.find((l: { status: string }) => l.status === "not_started");
    if (!open) continue;
    const trainings = await request(`/api/trainings?lesson=${open.lesson_id}&per_page=100`, {
      headers: learner,
    });
    const items: string[] = [];
    for (const training of trainings.body.data) {
      const page = await request(`/api/trainingItems?training=${training.id}&per_page=100`, {
        headers: learner,
      });
      items.push(...page.body.data.map((i: { id: string }) => i.id));
    }
    if (items.length >= 2) return { lesson: open.lesson_id, course: course.id, items };
  }
  throw new Error("the demo learner has started every lesson");
}

async function attempt(items: string[], score: (i: number) => number) {
  const at = Math.floor(Date.now() / 1000) * 1000 - 60_000;
  const attempts = items.map((id, i) => ({
    id: crypto.randomUUID(),
    training_item_id: id,
    score: score(i),
    correct: true,
    duration_seconds: 20 + (i % 30),
    occurred_at: new Date(at + i * 1000).toISOString(),
  }));
  for (let i = 0; i < attempts.length; i += 100) {
    const r = await request("/api/progress/attempts", {
      method: "POST",
      headers: learner,
      body: JSON.stringify({ attempts: attempts.slice(i, i + 100) }),
    });
    expect(r.res.status, r.text).toBe(200);
  }
  return attempts;
}

beforeAll(async () => {
  lrs = await startLearningLocker();
  dev = await readySharedDevServer();
  owner = await signIn(OWNER_EMAIL);
  learner = await signIn(LEARNER_EMAIL);
}, 420_000);

afterAll(async () => {
  await lrs?.close();
});

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(`Learning Locker's errors: ${lrs?.errors.join("\n") || "none"}`);
    console.error(`The dev server's output (last 20,000 characters):\n${dev?.output().slice(-20_000)}`);
  });
});

describe("npm run dev forwarding to Learning Locker", () => {
  it("registers Learning Locker through the API; the test call finds it reachable, speaking 1.0.3, accepting the credentials", async () => {
    const created = await request("/api/integrations/xapi-endpoints", {
      method: "POST",
      headers: owner,
      body: JSON.stringify({
        name: "Learning Locker",
        endpoint: lrs.endpoint,
        version: "1.0.3",
        auth: { type: "basic", username: lrs.username, password: lrs.password },
      }),
    });
    expect(created.res.status, created.text).toBe(201);
    expect(created.text).not.toContain(lrs.password);
    endpointId = created.body.id;

    const tested = await request(`/api/integrations/xapi-endpoints/${endpointId}/test`, {
      method: "POST",
      headers: owner,
    });
    expect(tested.res.status, tested.text).toBe(200);
    expect(tested.body).toMatchObject({
      reachable: true,
      version_supported: true,
      credentials_accepted: true,
      about: { status: 200, error: null },
      statements: { status: 200, error: null },
    });
    expect(tested.body.versions).toContain("1.0.3");
  });

  it("stores every statement of the learner's activity: an attempt, the lesson's progress, then the lesson completed", async () => {
    expect(endpointId, "the endpoint could not be registered (see the first failure)").not.toBe("");
    const target = await openLesson();

    // One item first: an answered statement and the lesson in progress.
    const first = await attempt(target.items.slice(0, 1), () => 0.75);
    const early = await settledLog(2);
    expect(early.map((e) => e.verb)).toEqual(expect.arrayContaining(["answered", "progressed"]));
    // Then the rest: the lesson completed (and whatever else it brings: the course, achievements, a level).
    const rest = await attempt(target.items.slice(1), (i) => (i % 3 === 0 ? 0.5 : 1));
    const attempts = [...first, ...rest];
    const entries = await settledLog(attempts.length + 2);

    // Every statement accepted at the first request: sent after one attempt, none refused.
    for (const e of entries)
      expect(e, JSON.stringify(e)).toMatchObject({ status: "sent", attempts: 1, last_error: null });
    expect(lrs.errors).toEqual([]);
    const stored = await statementsInLrs(entries.length);
    expect(stored.map((s) => s.id).sort()).toEqual(entries.map((e) => e.id).sort());

    const byId = new Map(stored.map((s) => [s.id as string, s]));
    const verbs = new Set(stored.map((s) => s.verb.id));
    for (const verb of ["answered", "progressed", "completed"]) expect(verbs).toContain(`${ADL}${verb}`);
    const home = stored[0]!.actor.account.homePage as string;
    expect(home).toMatch(/^https?:\/\/[^/]+$/);
    for (const s of stored) {
      // The actor: the learner's opaque account, never an e-mail.
      expect(s.actor).toMatchObject({ objectType: "Agent", account: { homePage: home, name: LEARNER_ID } });
      expect(s.actor.mbox).toBeUndefined();
      expect(s.object.id).toMatch(new RegExp(`^${home.replace(/[.]/g, "\\.")}/xapi/activities/`));
      expect(s.context.platform).toBe("Lingua");
      expect(Object.keys(s.verb.display)).toEqual(["en-US"]);
      // Set by Learning Locker, not by Lingua.
      expect(s.stored).toEqual(expect.any(String));
      expect(s.authority).toBeDefined();
    }

    // Each attempt as an answered statement about its item, in its lesson and course, with its result.
    const answered = stored.filter((s) => s.verb.id === `${ADL}answered`);
    expect(answered).toHaveLength(attempts.length);
    const lessonIri = `${home}/xapi/activities/lessons/${target.lesson}`;
    const courseIri = `${home}/xapi/activities/courses/${target.course}`;
    for (const sent of attempts) {
      const s = answered.find(
        (x) => x.object.id === `${home}/xapi/activities/training-items/${sent.training_item_id}`,
      );
      expect(s, sent.training_item_id).toBeDefined();
      expect(s!.object.definition).toMatchObject({
        type: "http://adlnet.gov/expapi/activities/cmi.interaction",
        interactionType: expect.any(String),
      });
      expect(s!.result).toMatchObject({
        success: true,
        score: { scaled: sent.score, raw: sent.score * 100, min: 0, max: 100 },
        duration: `PT${sent.duration_seconds}S`,
      });
      expect(s!.context.contextActivities.parent.map((a: { id: string }) => a.id)).toEqual([lessonIri]);
      expect(s!.context.contextActivities.grouping.map((a: { id: string }) => a.id)).toEqual([courseIri]);
      expect(Date.parse(s!.timestamp)).toBe(Date.parse(sent.occurred_at));
    }
    const progressed = stored.filter((s) => s.verb.id === `${ADL}progressed`);
    expect(progressed.map((s) => s.object.id)).toEqual([lessonIri]);
    expect(progressed[0]!.result.completion).toBe(false);
    const completedLesson = stored.find((s) => s.verb.id === `${ADL}completed` && s.object.id === lessonIri);
    expect(completedLesson?.result).toMatchObject({ completion: true, score: { min: 0, max: 100 } });
    expect(completedLesson?.context.contextActivities.grouping.map((a: { id: string }) => a.id)).toEqual([
      courseIri,
    ]);

    // A read of one statement by its id gives the same statement back.
    const one = entries.find((e) => e.verb === "completed")!;
    const res = await fetch(`${lrs.endpoint}statements?statementId=${one.id}`, {
      headers: { Authorization: lrs.authorization, "X-Experience-API-Version": "1.0.3" },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(byId.get(one.id));

    // Health through the API says the same.
    const got = await request(`/api/integrations/xapi-endpoints/${endpointId}`, { headers: owner });
    expect(got.body.health).toMatchObject({
      sent_24h: entries.length,
      failed_24h: 0,
      pending: 0,
      last_error: null,
      failing_since: null,
    });
  });
});
