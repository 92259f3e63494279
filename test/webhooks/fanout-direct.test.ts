import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { outboxEvents, webhookDeliveries, webhookDeliveryAttempts, webhooks } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, deliveryRow, deliveryRows, runQueue, waitUntil } from "./support";

async function insertEvent(institutionId: string, tag: string) {
  const id = `evt_direct_${tag}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  await database(env.DB)
    .insert(outboxEvents)
    .values({
      id,
      type: "lesson.completed",
      institutionId,
      payload: { lesson_id: "les_direct" },
      createdAt: now,
    });
  return id;
}

function deliveriesOf(eventId: string) {
  return deliveryRows(eq(webhookDeliveries.eventId, eventId));
}

it("the fan-out makes a healthy webhook's first attempt itself: sent, logged and closed before it returns", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
  await receiver.configure({ secrets: [hook.secret] });
  const eventId = await insertEvent(institution.id, "ok");

  await runQueue("lingua-events", [{ event_ids: [eventId] }]);
  const [delivery] = await deliveriesOf(eventId);
  expect(delivery).toMatchObject({
    status: "succeeded",
    attempt_count: 1,
    claimed_until: null,
    last_response_status: 200,
  });
  const got = await receiver.received();
  expect(got).toHaveLength(1);
  expect(got[0]!.headers["x-webhook-delivery"]).toBe(delivery!.id);
  expect(got[0]!.x_signature_valid).toEqual([true]);
  expect(got[0]!.standard_valid).toEqual([true]);
  const attempts = await database(env.DB)
    .select({
      number: webhookDeliveryAttempts.number,
      responseStatus: webhookDeliveryAttempts.responseStatus,
    })
    .from(webhookDeliveryAttempts)
    .where(eq(webhookDeliveryAttempts.deliveryId, delivery!.id));
  expect(attempts).toEqual([{ number: 1, responseStatus: 200 }]);
});

it("a fan-out repeated after a crash (event not yet marked) sends nothing a second time", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  await receiver.configure({});
  await createWebhook(admin, { url: receiver.url, events: ["*"] });
  const eventId = await insertEvent(institution.id, "again");

  await runQueue("lingua-events", [{ event_ids: [eventId] }]);
  // As if the first run had stopped after sending, before marking the event.
  await database(env.DB).update(outboxEvents).set({ fannedOutAt: null }).where(eq(outboxEvents.id, eventId));
  await Promise.all([
    runQueue("lingua-events", [{ event_ids: [eventId] }]),
    runQueue("lingua-events", [{ event_ids: [eventId] }]),
  ]);
  await new Promise((r) => setTimeout(r, 1000));
  expect(await receiver.received()).toHaveLength(1);
  const rows = await deliveriesOf(eventId);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ status: "succeeded", attempt_count: 1 });
});

it("a first attempt that fails in the fan-out becomes a delayed retry on the delivery queue", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  await receiver.configure({ script: [{ status: 503 }], fallback: { status: 204 } });
  await createWebhook(admin, { url: receiver.url, events: ["*"] });
  const eventId = await insertEvent(institution.id, "retry");

  const fanned = await runQueue("lingua-events", [{ event_ids: [eventId] }]);
  expect(fanned.retryMessages).toEqual([]);
  const [delivery] = await deliveriesOf(eventId);
  expect(delivery).toMatchObject({
    status: "retrying",
    attempt_count: 1,
    claimed_until: null,
    last_response_status: 503,
  });
  // The test schedule retries after about a second, through the delivery queue.
  await waitUntil(async () => (await deliveryRow(delivery!.id))?.status === "succeeded");
  expect(await deliveryRow(delivery!.id)).toMatchObject({ attempt_count: 2, last_response_status: 204 });
  const got = await receiver.received();
  expect(got.map((r) => r.headers["x-webhook-delivery"])).toEqual([delivery!.id, delivery!.id]);
});

it("a webhook that is failing is not tried in the fan-out: its delivery goes through the delivery queue", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  await receiver.configure({});
  const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
  await database(env.DB)
    .update(webhooks)
    .set({ consecutiveFailures: 1, failingSince: new Date().toISOString().replace(/\.\d{3}Z$/, "Z") })
    .where(eq(webhooks.id, hook.id));
  const eventId = await insertEvent(institution.id, "failing");

  await runQueue("lingua-events", [{ event_ids: [eventId] }]);
  const [delivery] = await deliveriesOf(eventId);
  await waitUntil(async () => (await deliveryRow(delivery!.id))?.status === "succeeded");
  expect(await deliveryRow(delivery!.id)).toMatchObject({ attempt_count: 1 });
  expect(await receiver.received()).toHaveLength(1);
  // The success through the queue reset the webhook's failure count.
  const row = await database(env.DB)
    .select({ consecutiveFailures: webhooks.consecutiveFailures })
    .from(webhooks)
    .where(eq(webhooks.id, hook.id))
    .get();
  expect(row).toEqual({ consecutiveFailures: 0 });
});

it("slow receivers: the fan-out stops starting first attempts after its budget and queues the rest, each still sent once per attempt", async () => {
  const { admin, institution } = await createTenant();
  const receivers = Array.from({ length: 12 }, () => receiverEndpoint());
  // Each answers its first request after the test time-out (1 s), then at once.
  for (const r of receivers)
    await r.configure({ script: [{ status: 200, delay_ms: 1600 }], fallback: { status: 204 } });
  for (const r of receivers) await createWebhook(admin, { url: r.url, events: ["*"] });
  const eventId = await insertEvent(institution.id, "slow");

  await runQueue("lingua-events", [{ event_ids: [eventId] }]);
  const after = await deliveriesOf(eventId);
  expect(after).toHaveLength(12);
  // Six at a time for one time-out: the first attempts made here failed; the others were handed over.
  const tried = after.filter((d) => d.status === "retrying");
  expect(tried.length).toBeGreaterThanOrEqual(1);
  expect(tried.length).toBeLessThan(12);
  expect(tried.every((d) => d.attempt_count === 1 && d.claimed_until === null)).toBe(true);

  await waitUntil(async () => (await deliveriesOf(eventId)).every((d) => d.status === "succeeded"), 30_000);
  await new Promise((r) => setTimeout(r, 500));
  for (const d of await deliveriesOf(eventId)) {
    const results = await database(env.DB)
      .select({ number: webhookDeliveryAttempts.number })
      .from(webhookDeliveryAttempts)
      .where(eq(webhookDeliveryAttempts.deliveryId, d.id))
      .orderBy(webhookDeliveryAttempts.number);
    expect(results.map((a) => a.number)).toEqual(Array.from({ length: d.attempt_count }, (_, n) => n + 1));
  }
  const got = (await Promise.all(receivers.map((r) => r.received()))).flat();
  const perDelivery = new Map<string, number>();
  for (const r of got)
    perDelivery.set(
      r.headers["x-webhook-delivery"]!,
      (perDelivery.get(r.headers["x-webhook-delivery"]!) ?? 0) + 1,
    );
  for (const d of await deliveriesOf(eventId)) expect(perDelivery.get(d.id)).toBe(d.attempt_count);
});

it("the fan-out's direct attempt checks the stored URL too: refused, nothing sent, no retry, webhook disabled", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
  const eventId = await insertEvent(institution.id, "refused");

  await runQueue("lingua-events", [{ event_ids: [eventId] }], { ALLOW_LOOPBACK_TARGETS: "false" });
  const [delivery] = await deliveriesOf(eventId);
  expect(delivery).toMatchObject({ status: "failed", attempt_count: 1, last_error_code: "target_refused" });
  expect(await receiver.received()).toEqual([]);
  const row = await database(env.DB)
    .select({ enabled: webhooks.enabled, disabledReason: webhooks.disabledReason })
    .from(webhooks)
    .where(eq(webhooks.id, hook.id))
    .get();
  expect(row).toEqual({ enabled: false, disabledReason: "target_refused" });
});
