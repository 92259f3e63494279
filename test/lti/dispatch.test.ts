import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { expect, it } from "vitest";
import { outboxEvents } from "../../src/db/schema";
import worker from "../../src/index";
import { database } from "../../src/platform/db";
import { outboxDispatcher } from "../../src/platform/outbox-dispatch";
import { testContext } from "../helpers/context";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, runQueue, waitUntil } from "../webhooks/support";
import { LTI, launch, registerPlatform } from "./support";

function batchOf(bodies: unknown[]) {
  return createMessageBatch(
    "lingua-events",
    bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
  );
}

it("hands every event to each subscriber once per batch and acknowledges the batch", async () => {
  const seen: Record<string, string[][]> = { a: [], b: [] };
  const dispatch = outboxDispatcher([
    { name: "a", deliver: async (_env, ids) => void seen.a!.push(ids) },
    { name: "b", deliver: async (_env, ids) => void seen.b!.push(ids) },
  ]);
  const batch = batchOf([
    { event_ids: ["evt_1"] },
    { event_ids: ["evt_2"] },
    { event_ids: ["evt_1"] },
    { nope: 1 },
  ]);
  const ctx = createExecutionContext();
  await dispatch(batch, testContext({ execution: ctx }));
  expect(seen).toEqual({ a: [["evt_1", "evt_2"]], b: [["evt_1", "evt_2"]] });
  const result = await getQueueResult(batch, ctx);
  // The three that fit are acknowledged; the one that does not was dead-lettered (and acknowledged).
  expect(result.explicitAcks.sort()).toEqual(["m0", "m1", "m2", "m3"]);
  expect(result.retryMessages).toEqual([]);
});

it("retries the whole batch when a subscriber fails, after the others have had it", async () => {
  const delivered: string[] = [];
  const dispatch = outboxDispatcher([
    { name: "fails", deliver: async () => Promise.reject(new Error("D1 hiccup")) },
    { name: "works", deliver: async (_env, ids) => void delivered.push(...ids) },
  ]);
  const batch = batchOf([{ event_ids: ["evt_9"] }]);
  const ctx = createExecutionContext();
  await dispatch(batch, testContext({ execution: ctx }));
  expect(delivered).toEqual(["evt_9"]);
  const result = await getQueueResult(batch, ctx);
  expect(result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual(["m0"]);
  expect(result.explicitAcks).toEqual([]);
});

it("flattens the ids of the batch's messages into one de-duplicated set, in order", async () => {
  const seen: string[][] = [];
  const dispatch = outboxDispatcher([{ name: "a", deliver: async (_env, ids) => void seen.push(ids) }]);
  const batch = batchOf([
    { event_ids: ["evt_1", "evt_2", "evt_3"] },
    { event_ids: ["evt_2"] },
    { event_ids: ["evt_3", "evt_4"] },
  ]);
  const ctx = createExecutionContext();
  await dispatch(batch, testContext({ execution: ctx }));
  expect(seen).toEqual([["evt_1", "evt_2", "evt_3", "evt_4"]]);
  const result = await getQueueResult(batch, ctx);
  expect(result.explicitAcks.sort()).toEqual(["m0", "m1", "m2"]);
});

it("retries every message of a batch of packed messages when a subscriber fails", async () => {
  const dispatch = outboxDispatcher([
    { name: "fails", deliver: async () => Promise.reject(new Error("D1 hiccup")) },
  ]);
  const batch = batchOf([
    { event_ids: ["evt_1", "evt_2"] },
    { event_ids: ["evt_3"] },
    { event_ids: ["evt_4"] },
  ]);
  const ctx = createExecutionContext();
  await dispatch(batch, testContext({ execution: ctx }));
  const result = await getQueueResult(batch, ctx);
  expect(result.retryMessages.map((m: { msgId: string }) => m.msgId).sort()).toEqual(["m0", "m1", "m2"]);
  expect(result.explicitAcks).toEqual([]);
});

/** A producer that records what is sent to it instead of queueing (the events queue, for the sweep). */
function recordingQueue() {
  const sent: { event_ids: string[] }[] = [];
  const queue = {
    send: async (body: { event_ids: string[] }) => void sent.push(body),
    sendBatch: async (messages: Iterable<{ body: { event_ids: string[] } }>) => {
      for (const m of messages) sent.push(m.body);
    },
  };
  return { queue: queue as unknown as Queue, sent, ids: () => sent.flatMap((m) => m.event_ids) };
}

/** The minute cron as the runtime runs it, its events queue recorded: the ids it re-published. */
async function sweep(): Promise<string[][]> {
  const recorded = recordingQueue();
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }),
    { ...env, EVENTS_QUEUE: recorded.queue },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return recorded.sent.map((m) => m.event_ids);
}

let sequence = 0;

/** Committed outbox events, two minutes old, never dispatched (as if their messages had been lost). */
async function insertEvents(count: number): Promise<string[]> {
  sequence += 1;
  const ids = Array.from({ length: count }, (_, i) => `evt_dsp_${Date.now().toString(36)}${sequence}_${i}`);
  const created = new Date(Date.now() - 120_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  await database(env.DB)
    .insert(outboxEvents)
    .values(
      ids.map((id) => ({ id, type: "member.created", institutionId: null, payload: {}, createdAt: created })),
    );
  return ids;
}

async function dispatchedAt(ids: string[]): Promise<(string | null)[]> {
  const results = await database(env.DB)
    .select({ dispatchedAt: outboxEvents.dispatchedAt })
    .from(outboxEvents)
    .where(inArray(outboxEvents.id, ids))
    .orderBy(outboxEvents.id);
  expect(results).toHaveLength(ids.length);
  return results.map((r) => r.dispatchedAt);
}

it("a batch that every subscriber took marks its events dispatched, and the sweep leaves them alone", async () => {
  const ids = await insertEvents(3);
  const dispatch = outboxDispatcher([
    { name: "a", deliver: async () => {} },
    { name: "b", deliver: async () => {} },
  ]);
  const batch = batchOf([{ event_ids: ids.slice(0, 2) }, { event_ids: ids.slice(2) }]);
  const ctx = createExecutionContext();
  await dispatch(batch, testContext({ execution: ctx }));
  expect((await getQueueResult(batch, ctx)).explicitAcks.sort()).toEqual(["m0", "m1"]);
  const marked = await dispatchedAt(ids);
  expect(marked.every((at) => typeof at === "string" && !Number.isNaN(Date.parse(at)))).toBe(true);
  expect((await sweep()).flat().filter((id) => ids.includes(id))).toEqual([]);

  // Redelivered: still acknowledged, and the first time stays.
  const again = batchOf([{ event_ids: ids }]);
  await new Promise((r) => setTimeout(r, 1100));
  await dispatch(again, testContext());
  expect(await dispatchedAt(ids)).toEqual(marked);
});

it("an event one subscriber failed on stays undispatched; the sweep hands it to every subscriber again", async () => {
  const ids = await insertEvents(2);
  let lmsUp = false;
  const got: Record<string, string[]> = { webhooks: [], lms: [] };
  const dispatch = outboxDispatcher([
    { name: "webhooks", deliver: async (_env, eventIds) => void got.webhooks!.push(...eventIds) },
    {
      name: "lms",
      deliver: async (_env, eventIds) => {
        if (!lmsUp) throw new Error("LMS queue unavailable");
        got.lms!.push(...eventIds);
      },
    },
  ]);
  // Every retry fails, until the message is dead-lettered: nothing is marked.
  for (let attempt = 0; attempt < 3; attempt++) {
    const batch = batchOf([{ event_ids: ids }]);
    const ctx = createExecutionContext();
    await dispatch(batch, testContext({ execution: ctx }));
    expect((await getQueueResult(batch, ctx)).retryMessages).toHaveLength(1);
  }
  expect(await dispatchedAt(ids)).toEqual([null, null]);

  // The sweep re-publishes them (and only once within its five minutes).
  const republished = await sweep();
  expect(republished.flat()).toEqual(expect.arrayContaining(ids));
  expect((await sweep()).flat().filter((id) => ids.includes(id))).toEqual([]);

  lmsUp = true;
  const batch = batchOf(republished.map((eventIds) => ({ event_ids: eventIds })));
  const ctx = createExecutionContext();
  await dispatch(batch, testContext({ execution: ctx }));
  expect((await getQueueResult(batch, ctx)).retryMessages).toEqual([]);
  expect(got.lms).toEqual(expect.arrayContaining(ids));
  expect((await dispatchedAt(ids)).every((at) => at !== null)).toBe(true);
});

it("a completion whose webhook went out but whose passback failed until dead-lettered still reaches the LMS, the webhook once", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  await reg.platform.learnToolKeys();
  await reg.platform.configure({ line_item_maximum: 40 });
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 2 });
  const lessonId = course.lessons[0]!.id;
  const launched = await launch(reg, { [`${LTI}custom`]: { lingua_lesson_id: lessonId } });
  expect(launched.res.status).toBe(200);
  // Created after the launch and for completions only, so this test's event is all it receives.
  const receiver = receiverEndpoint();
  const hook = await createWebhook(tenant.admin, { url: receiver.url, events: ["lesson.completed"] });
  await receiver.configure({ secrets: [hook.secret] });

  // The learner's completion, committed two minutes ago; its queue message is handed over below.
  const eventId = `evt_lti_${Date.now().toString(36)}`;
  const created = new Date(Date.now() - 120_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  await database(env.DB)
    .insert(outboxEvents)
    .values({
      id: eventId,
      type: "lesson.completed",
      institutionId: tenant.institution.id,
      userId: launched.body.launch.user_id,
      payload: { user_id: launched.body.launch.user_id, lesson_id: lessonId, score: 0.75 },
      createdAt: created,
    });

  // The passback queue refuses every send: the webhook goes out, the LTI subscriber fails, the
  // message is retried (as it would be until it is dead-lettered).
  const down = { sendBatch: async () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue;
  const failed = await runQueue("lingua-events", [{ event_ids: [eventId] }], { LTI_PASSBACK_QUEUE: down });
  expect(failed.retryMessages).toHaveLength(1);
  const [delivered] = await receiver.waitFor(1);
  expect(JSON.parse(delivered!.body).id).toBe(eventId);
  const row = await database(env.DB)
    .select({ fannedOutAt: outboxEvents.fannedOutAt, dispatchedAt: outboxEvents.dispatchedAt })
    .from(outboxEvents)
    .where(eq(outboxEvents.id, eventId))
    .get();
  expect(row?.fannedOutAt).not.toBeNull();
  expect(row?.dispatchedAt).toBeNull();

  // The sweep re-publishes it; the events consumer then gets the score to the LMS.
  const republished = await sweep();
  expect(republished.flat()).toContain(eventId);
  const run = await runQueue(
    "lingua-events",
    republished.map((ids) => ({ event_ids: ids })),
  );
  expect(run.retryMessages).toEqual([]);
  const [score] = await waitUntil(async () => {
    const got = (await reg.platform.state()).score_requests;
    return got.length > 0 ? got : null;
  });
  expect(score!.body).toMatchObject({ userId: launched.body.launch.sub, scoreGiven: 30, scoreMaximum: 40 });
  expect(await dispatchedAt([eventId])).not.toEqual([null]);

  // The webhook was not sent a second time.
  await new Promise((r) => setTimeout(r, 1500));
  expect(await receiver.received()).toHaveLength(1);
  expect((await reg.platform.state()).score_requests).toHaveLength(1);
});
