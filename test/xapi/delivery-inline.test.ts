import { createExecutionContext, env } from "cloudflare:test";
import { afterEach, expect, it, vi } from "vitest";
import { forwardEvents } from "../../src/domains/xapi/delivery/subscriber";
import { xapiTarget } from "../../src/domains/xapi/delivery/target";
import { advanceClock, clockNow, resetClock } from "../../src/platform/service/clock";
import { backgroundContext, type ServiceContext } from "../../src/platform/service/context";
import { runSweeps } from "../../src/scheduled";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import type { ScriptedAnswer } from "../helpers/receiver-server";
import { createTenant } from "../helpers/tenants";
import { runQueue, waitUntil } from "../webhooks/support";
import {
  batchesOf,
  carried,
  createEndpoint,
  dispatched,
  outboxOfUser,
  recordAttempts,
  statementsOf,
  updateEndpoint,
  XAPI_QUEUE,
} from "./support";

/**
 * The subscriber's first attempt: a healthy endpoint's new batches are sent by the events consumer
 * itself (offer.ts, platform/delivery's sendFirstAttempts); only retries, and a failing endpoint's
 * batches, go through the xAPI queue.
 */

afterEach(() => {
  resetClock();
  vi.restoreAllMocks();
});

/** An xAPI queue that keeps its messages with their delays, so the test hands them over itself. */
class DelayedQueue {
  messages: { body: unknown; delaySeconds?: number }[] = [];
  async send(body: unknown, options?: { delaySeconds?: number }) {
    this.messages.push({ body, delaySeconds: options?.delaySeconds });
  }
  async sendBatch(messages: Iterable<{ body: unknown; delaySeconds?: number }>) {
    for (const m of messages) this.messages.push({ body: m.body, delaySeconds: m.delaySeconds });
  }
}

function queueContext(): { ctx: ServiceContext; queue: DelayedQueue } {
  const queue = new DelayedQueue();
  const bindings = { ...env, XAPI_QUEUE: queue as unknown as Queue } as Cloudflare.Env;
  const ctx = backgroundContext(
    bindings,
    { waitUntil: (promise: Promise<unknown>) => void promise.catch(() => undefined) },
    "queue",
  );
  return { ctx, queue };
}

/**
 * A learner's `count` attempts recorded (and dispatched) before the institution forwarded anything,
 * then an endpoint: the test runs the subscriber on the recording's event itself.
 */
async function recordedThenEndpoint(count: number, answers: { script?: ScriptedAnswer[] } = {}) {
  const tenant = await createTenant();
  await recordAttempts(tenant.learner, count);
  await dispatched(tenant.learner.id);
  const receiver = receiverEndpoint();
  await receiver.configure({ script: answers.script ?? [], fallback: { status: 200 } });
  const endpointId = await createEndpoint(tenant.institution.id, receiver.url);
  const eventIds = (await outboxOfUser(tenant.learner.id))
    .filter((e) => e.type === "attempts.recorded")
    .map((e) => e.id);
  return { tenant, receiver, endpointId, eventIds };
}

it("a healthy endpoint's statements arrive from the events consumer itself: no xAPI queue message", async () => {
  const { receiver, endpointId, eventIds } = await recordedThenEndpoint(3);
  const { ctx, queue } = queueContext();
  await forwardEvents(ctx, eventIds);

  expect(queue.messages).toEqual([]);
  const requests = await receiver.received();
  expect(requests).toHaveLength(1);
  const rows = await statementsOf(endpointId);
  // Three answered (the lesson is complete: no progressed), in the order they happened.
  expect(rows).toHaveLength(3);
  expect(carried(requests[0]!.body).map((s) => s.id)).toEqual(rows.map((s) => s.id));
  expect(rows.every((s) => s.status === "sent" && s.attempts === 1 && s.sentAt !== null)).toBe(true);
  const [batch] = await batchesOf(endpointId);
  expect(batch).toMatchObject({
    status: "succeeded",
    attemptCount: 1,
    claimedUntil: null,
    lastResponseStatus: 200,
    bodies: null,
  });

  // The event again (at-least-once): nothing new to offer, nothing sent or queued.
  await forwardEvents(ctx, eventIds);
  expect(queue.messages).toEqual([]);
  expect(await receiver.received()).toHaveLength(1);
});

it("a failing endpoint's batches go through the xAPI queue, untried", async () => {
  const { receiver, endpointId, eventIds } = await recordedThenEndpoint(2);
  await updateEndpoint(endpointId, { failingSince: "2026-11-20T00:00:00Z", lastError: "HTTP 503" });
  const { ctx, queue } = queueContext();
  await forwardEvents(ctx, eventIds);

  expect(await receiver.received()).toEqual([]);
  const [batch] = await batchesOf(endpointId);
  expect(batch).toMatchObject({ status: "pending", attemptCount: 0, claimedUntil: null });
  expect(queue.messages).toEqual([{ body: { batch_id: batch!.id }, delaySeconds: undefined }]);

  const run = await runQueue(
    XAPI_QUEUE,
    queue.messages.map((m) => m.body),
  );
  expect(run.explicitAcks).toHaveLength(1);
  expect(await receiver.received()).toHaveLength(1);
  expect((await statementsOf(endpointId)).every((s) => s.status === "sent")).toBe(true);
});

it("a first attempt answered 429 is queued with its Retry-After, and sent once more when due, built again from its facts", async () => {
  const { tenant, receiver, endpointId, eventIds } = await recordedThenEndpoint(2, {
    script: [{ status: 429, headers: { "retry-after": "120" }, body: "" }],
  });
  const { ctx, queue } = queueContext();
  await forwardEvents(ctx, eventIds);

  const [batch] = await batchesOf(endpointId);
  expect(batch).toMatchObject({
    status: "retrying",
    attemptCount: 1,
    claimedUntil: null,
    lastResponseStatus: 429,
  });
  expect(queue.messages).toEqual([{ body: { batch_id: batch!.id }, delaySeconds: 120 }]);
  expect(await receiver.received()).toHaveLength(1);
  // No statement body is stored: the batch keeps the facts its statements are built from.
  expect(batch!.bodies).toBeNull();
  expect(JSON.parse(batch!.facts!)).toHaveLength(2);

  // The learner is renamed before the retry.
  const renamed = await callJson(`/api/institutions/${tenant.institution.id}/members/${tenant.learner.id}`, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { name: "Renamed Learner" },
  });
  expect(renamed.res.status).toBe(200);

  advanceClock(121_000);
  const run = await runQueue(
    XAPI_QUEUE,
    queue.messages.map((m) => m.body),
  );
  expect(run.explicitAcks).toHaveLength(1);
  const requests = await receiver.received();
  expect(requests).toHaveLength(2);
  // The retry sends the same statements, built again from their facts: the same ids, verb, object,
  // result, context and timestamp; the actor by the name the learner has now.
  const [first, retry] = requests.map((r) => carried(r.body));
  expect(retry!.map((s) => s.id)).toEqual(first!.map((s) => s.id));
  expect(retry).toEqual(
    first!.map((s) => ({ ...s, actor: { ...(s.actor as object), name: "Renamed Learner" } })),
  );
  expect(first!.every((s) => (s.actor as { name: string }).name !== "Renamed Learner")).toBe(true);
  expect((await statementsOf(endpointId)).every((s) => s.status === "sent" && s.attempts === 2)).toBe(true);
  expect((await batchesOf(endpointId))[0]).toMatchObject({ facts: null, bodies: null });
});

it("a crash after the commit, before the send: the batch stays claimed, then the sweep sends it once", async () => {
  const { receiver, endpointId, eventIds } = await recordedThenEndpoint(2);
  const { ctx, queue } = queueContext();
  vi.spyOn(xapiTarget, "send").mockRejectedValueOnce(new Error("the invocation died"));
  await expect(forwardEvents(ctx, eventIds)).rejects.toThrow("the invocation died");

  const [batch] = await batchesOf(endpointId);
  expect(batch).toMatchObject({ status: "pending", attemptCount: 1 });
  expect(batch!.claimedUntil).toBeGreaterThan(clockNow());
  expect(queue.messages).toEqual([]);
  expect(await receiver.received()).toEqual([]);

  // The events consumer's retry finds the statements stored and the batch claimed: nothing to do.
  vi.restoreAllMocks();
  await forwardEvents(ctx, eventIds);
  expect(queue.messages).toEqual([]);
  expect(await receiver.received()).toEqual([]);

  // Once the claim has lapsed, the minute sweep hands the batch to the queue.
  advanceClock(batch!.claimedUntil! - clockNow() + 120_000);
  await runSweeps(env, createExecutionContext(), clockNow());
  await receiver.waitFor(1);
  await waitUntil(async () => (await statementsOf(endpointId)).every((s) => s.status === "sent"));
  await new Promise((r) => setTimeout(r, 300));
  const requests = await receiver.received();
  expect(requests).toHaveLength(1);
  const ids = carried(requests[0]!.body).map((s) => s.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.sort()).toEqual((await statementsOf(endpointId)).map((s) => s.id).sort());
});

it("a crash after the first group's batches were sent and the next group's only written: the retry sends nothing, the sweep sends the rest once", async () => {
  // 11 requests of 100 attempts: the subscriber reads them in two groups (1,000 facts, then 100), the
  // first group's 20 batches sent while the second is read and committed.
  const tenant = await createTenant();
  for (let i = 0; i < 11; i++) await recordAttempts(tenant.learner, 100);
  await dispatched(tenant.learner.id);
  const receiver = receiverEndpoint();
  await receiver.configure({ script: [], fallback: { status: 200 } });
  const endpointId = await createEndpoint(tenant.institution.id, receiver.url);
  const eventIds = (await outboxOfUser(tenant.learner.id))
    .filter((e) => e.type === "attempts.recorded")
    .map((e) => e.id);
  expect(eventIds).toHaveLength(11);

  // The invocation dies once the first group's 20 batches are sent: the second group's two batches
  // are committed (claimed by their first attempt) but never reach the LRS.
  const send = xapiTarget.send.bind(xapiTarget);
  let calls = 0;
  vi.spyOn(xapiTarget, "send").mockImplementation(async (ctx, item) => {
    calls += 1;
    if (calls > 20) throw new Error("the invocation died");
    return send(ctx, item);
  });
  const { ctx, queue } = queueContext();
  await expect(forwardEvents(ctx, eventIds)).rejects.toThrow("the invocation died");
  const sentFirst = await receiver.received();
  expect(sentFirst).toHaveLength(20);
  const batches = await batchesOf(endpointId);
  expect(batches).toHaveLength(22);
  const open = batches.filter((b) => b.status === "pending");
  expect(open).toHaveLength(2);
  for (const batch of open) {
    expect(batch.attemptCount).toBe(1);
    expect(batch.claimedUntil).toBeGreaterThan(clockNow());
  }

  // The events consumer's retry: every statement is stored, every batch claimed or finished.
  vi.restoreAllMocks();
  await forwardEvents(ctx, eventIds);
  expect(queue.messages).toEqual([]);
  expect(await receiver.received()).toHaveLength(20);

  // The claims lapse; the minute sweep hands the two batches over, and each is sent once.
  advanceClock(open[0]!.claimedUntil! - clockNow() + 120_000);
  await runSweeps(env, createExecutionContext(), clockNow());
  await receiver.waitFor(22);
  await waitUntil(async () => (await statementsOf(endpointId)).every((s) => s.status === "sent"));
  await new Promise((r) => setTimeout(r, 300));
  const requests = await receiver.received();
  expect(requests).toHaveLength(22);
  const ids = requests.flatMap((r) => carried(r.body).map((s) => s.id));
  expect(ids).toHaveLength(1_100);
  expect(new Set(ids).size).toBe(1_100);
  expect(ids.sort()).toEqual((await statementsOf(endpointId)).map((s) => s.id).sort());
}, 120_000);
