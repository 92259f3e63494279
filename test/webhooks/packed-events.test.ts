import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { and, eq, inArray, isNull, or } from "drizzle-orm";
import { expect, it, vi } from "vitest";
import { outboxEvents, webhookDeliveries, webhooks } from "../../src/db/schema";
import worker from "../../src/index";
import { database } from "../../src/platform/db";
import { MAX_EVENTS_PER_MESSAGE, publishEvents } from "../../src/platform/events";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, runQueue } from "./support";

/** A producer that records each `sendBatch` call (and can be told to fail), instead of queueing. */
class RecordingQueue {
  calls: unknown[][] = [];
  constructor(private readonly failWith?: Error) {}
  async send(body: unknown) {
    await this.sendBatch([{ body }]);
  }
  async sendBatch(messages: Iterable<{ body: unknown }>) {
    if (this.failWith) throw this.failWith;
    this.calls.push([...messages].map((m) => m.body));
  }
  get messages() {
    return this.calls.flat() as { event_ids: string[] }[];
  }
}

let sequence = 0;

/** `count` committed outbox events of the institution that nothing has fanned out yet. */
async function insertEvents(institutionId: string, count: number, ageMs = 0): Promise<string[]> {
  sequence += 1;
  const tag = `${Date.now().toString(36)}${sequence}`;
  // Zero-padded, so the ids sort in creation order as real (ULID) ids do.
  const ids = Array.from({ length: count }, (_, i) => `evt_pack_${tag}_${String(i).padStart(5, "0")}`);
  const created = new Date(Date.now() - ageMs).toISOString().replace(/\.\d{3}Z$/, "Z");
  const db = database(env.DB);
  const rows = ids.map((id) => ({
    id,
    type: "member.created",
    institutionId,
    payload: {},
    createdAt: created,
  }));
  // Five columns a row: 20 rows a statement stay within D1's 100 bound parameters.
  for (let i = 0; i < rows.length; i += 20) await db.insert(outboxEvents).values(rows.slice(i, i + 20));
  return ids;
}

async function setup() {
  const tenant = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(tenant.admin, { url: receiver.url, events: ["*"] });
  await receiver.configure({ secrets: [hook.secret] });
  return { ...tenant, receiver, hook };
}

async function deliveryCount(eventIds: string[]): Promise<number> {
  return database(env.DB).$count(webhookDeliveries, inArray(webhookDeliveries.eventId, eventIds));
}

it("publishing 250 events sends ceil(250 / 10) = 25 messages, ids in order, in one sendBatch call", async () => {
  const queue = new RecordingQueue();
  const ids = Array.from({ length: 250 }, (_, i) => `evt_${i}`);
  await publishEvents({ env: { ...env, EVENTS_QUEUE: queue as unknown as Queue }, database: "DB" }, ids);
  expect(MAX_EVENTS_PER_MESSAGE).toBe(10);
  expect(queue.calls).toHaveLength(1);
  expect(queue.messages.map((m) => m.event_ids.length)).toEqual(Array(25).fill(10));
  expect(queue.messages.flatMap((m) => m.event_ids)).toEqual(ids);
});

it("publishing 10,000 events sends 1,000 messages in 10 sendBatch calls; 1 event is one message", async () => {
  const queue = new RecordingQueue();
  const bindings = { env: { ...env, EVENTS_QUEUE: queue as unknown as Queue }, database: "DB" as const };
  const ids = Array.from({ length: 10_000 }, (_, i) => `evt_${i}`);
  await publishEvents(bindings, ids);
  expect(queue.calls.map((c) => c.length)).toEqual(Array(10).fill(100));
  expect(queue.messages.flatMap((m) => m.event_ids)).toEqual(ids);

  queue.calls = [];
  await publishEvents(bindings, ["evt_one"]);
  expect(queue.calls).toEqual([[{ event_ids: ["evt_one"] }]]);
  queue.calls = [];
  await publishEvents(bindings, []);
  expect(queue.calls).toEqual([]);
});

it("a failed publish does not throw: it is logged for the sweep to retry", async () => {
  const errors = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    const queue = new RecordingQueue(new Error("queue unavailable"));
    await expect(
      publishEvents({ env: { ...env, EVENTS_QUEUE: queue as unknown as Queue }, database: "DB" }, [
        "evt_a",
        "evt_b",
      ]),
    ).resolves.toBeUndefined();
    const logged = errors.mock.calls.map((c) => JSON.parse(String(c[0])));
    expect(logged).toContainEqual(
      expect.objectContaining({ message: "event publish failed; the sweep will retry", events: 2 }),
    );
  } finally {
    errors.mockRestore();
  }
});

it("the scheduled sweep re-publishes unpublished events packed the same way, oldest first", async () => {
  const { institution } = await setup();
  const ids = await insertEvents(institution.id, 120, 120_000);
  const queue = new RecordingQueue();
  const ctx = createExecutionContext();
  await worker.scheduled!(
    createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }),
    { ...env, EVENTS_QUEUE: queue as unknown as Queue },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(queue.calls).toHaveLength(1);
  expect(queue.messages.map((m) => m.event_ids.length)).toEqual(Array(12).fill(10));
  expect(queue.messages.flatMap((m) => m.event_ids)).toEqual(ids);
});

it("a message carrying several events fans out each to the webhook exactly once, also when redelivered", async () => {
  const { institution, receiver, hook } = await setup();
  const ids = await insertEvents(institution.id, 7);
  // Two messages whose ids overlap (as after a re-publish by the sweep): one delivery per event.
  const first = await runQueue("lingua-events", [
    { event_ids: ids.slice(0, 5) },
    { event_ids: ids.slice(3) },
  ]);
  expect(first.explicitAcks).toHaveLength(2);
  expect(first.retryMessages).toEqual([]);
  const got = await receiver.waitFor(7);
  expect(got.map((r) => JSON.parse(r.body).id).sort()).toEqual(ids);
  expect(got.every((r) => r.headers["x-webhook-id"] === hook.id)).toBe(true);

  // The same packed message again, twice in one batch and once more on its own: nothing is sent twice.
  const again = await runQueue("lingua-events", [{ event_ids: ids }, { event_ids: ids }]);
  expect(again.explicitAcks).toHaveLength(2);
  const once = await runQueue("lingua-events", [{ event_ids: ids }]);
  expect(once.explicitAcks).toHaveLength(1);
  await new Promise((r) => setTimeout(r, 1500));
  expect(await receiver.received()).toHaveLength(7);
  expect(await deliveryCount(ids)).toBe(7);
});

it("a body of another shape is dead-lettered at once; the batch's good messages are fanned out", async () => {
  const { institution, receiver } = await setup();
  const [good] = await insertEvents(institution.id, 1);
  const deadLettered: unknown[] = [];
  const dlq = { send: async (body: unknown) => void deadLettered.push(body) } as unknown as Queue;
  const bad = [
    { event_ids: [] },
    { event_ids: Array.from({ length: MAX_EVENTS_PER_MESSAGE + 1 }, (_, i) => `evt_${i}`) },
    { event_ids: ["evt_ok", 42] },
    { event_ids: "evt_x" },
    // The single-event shape of development builds: gone, not read.
    { event_id: good },
    { events: ["evt_y"] },
  ];
  const run = await runQueue("lingua-events", [...bad, { event_ids: [good] }], { EVENTS_DLQ: dlq });
  expect(run.retryMessages).toEqual([]);
  expect(run.explicitAcks).toHaveLength(bad.length + 1);
  expect(deadLettered).toEqual(bad);
  const [got] = await receiver.waitFor(1);
  expect(JSON.parse(got!.body).id).toBe(good);

  // The dead-letter queue's own consumer acknowledges its shape and anything else.
  const end = await runQueue("lingua-events-dlq", [{ event_ids: [good] }, { event_id: good }, { nope: 1 }]);
  expect(end.explicitAcks).toHaveLength(3);
  expect(end.retryMessages).toEqual([]);
});

it("a full batch of packed messages (10 × 10 events, 3 webhooks) is fanned out in one invocation", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  const hooks = [];
  for (let h = 0; h < 3; h++)
    hooks.push(await createWebhook(admin, { url: `${receiver.url}?h=${h}`, events: ["member.created"] }));
  // Failing webhooks: every delivery goes to the (recorded) delivery queue, none is sent from here.
  await database(env.DB)
    .update(webhooks)
    .set({ consecutiveFailures: 1 })
    .where(eq(webhooks.institutionId, institution.id));
  // max_batch_size of lingua-events in wrangler.toml.
  const fullBatch = 10;
  const ids = await insertEvents(institution.id, fullBatch * MAX_EVENTS_PER_MESSAGE);
  const deliveries = new RecordingQueue();
  const messages = Array.from({ length: fullBatch }, (_, m) => ({
    event_ids: ids.slice(m * MAX_EVENTS_PER_MESSAGE, (m + 1) * MAX_EVENTS_PER_MESSAGE),
  }));
  const overrides = { WEBHOOK_QUEUE: deliveries as unknown as Queue };
  const run = await runQueue("lingua-events", messages, overrides);
  expect(run.retryMessages).toEqual([]);
  expect(run.explicitAcks).toHaveLength(fullBatch);
  expect(await deliveryCount(ids)).toBe(300);
  expect(deliveries.calls.flat()).toHaveLength(300);
  // All 100 fanned out and, every subscriber having taken them, marked dispatched in one statement.
  const open = await database(env.DB).$count(
    outboxEvents,
    and(
      inArray(outboxEvents.id, ids),
      or(isNull(outboxEvents.fannedOutAt), isNull(outboxEvents.dispatchedAt)),
    ),
  );
  expect(open).toBe(0);

  // Delivered again (a retried batch): nothing new is written or queued.
  deliveries.calls = [];
  const again = await runQueue("lingua-events", messages, overrides);
  expect(again.explicitAcks).toHaveLength(fullBatch);
  expect(await deliveryCount(ids)).toBe(300);
  expect(deliveries.calls).toEqual([]);
  expect(await receiver.received()).toEqual([]);
});
