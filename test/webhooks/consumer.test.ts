import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, expect, it } from "vitest";
import { outboxEvents, webhookDeliveries, webhookDeliveryAttempts, webhooks } from "../../src/db/schema";
import worker from "../../src/index";
import { database } from "../../src/platform/db";
import { advanceClock, resetClock } from "../../src/platform/service/clock";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, deliveryRow, insertDelivery, runQueue, waitUntil } from "./support";

const DELIVERIES = "lingua-webhook-deliveries";

// Tests that move the service context's clock put it back.
afterEach(() => resetClock());

async function setup(
  script: { status?: number; delay_ms?: number; headers?: Record<string, string> }[] = [],
  fallback = { status: 200 },
) {
  const tenant = await createTenant();
  const receiver = receiverEndpoint();
  await receiver.configure({ script, fallback });
  const hook = await createWebhook(tenant.admin, { url: receiver.url, events: ["*"] });
  return { ...tenant, receiver, hook };
}

it("a message delivered twice, in one batch or in two, sends once and logs one attempt", async () => {
  const { institution, receiver, hook } = await setup();
  const { deliveryId } = await insertDelivery(hook.id, institution.id);
  const first = await runQueue(DELIVERIES, [{ delivery_id: deliveryId }, { delivery_id: deliveryId }]);
  expect(first.explicitAcks).toHaveLength(2);
  const again = await runQueue(DELIVERIES, [{ delivery_id: deliveryId }]);
  expect(again.explicitAcks).toHaveLength(1);
  expect(again.retryMessages).toEqual([]);
  expect(await receiver.received()).toHaveLength(1);
  const row = await deliveryRow(deliveryId);
  expect(row).toMatchObject({ status: "succeeded", attempt_count: 1 });
  const db = database(env.DB);
  expect(await db.$count(webhookDeliveryAttempts, eq(webhookDeliveryAttempts.deliveryId, deliveryId))).toBe(
    1,
  );
});

it("two consumers racing on one delivery: one sends, the other waits for the claim and then acknowledges", async () => {
  const { institution, receiver, hook } = await setup([{ status: 200, delay_ms: 400 }]);
  const { deliveryId } = await insertDelivery(hook.id, institution.id);
  const [a, b] = await Promise.all([
    runQueue(DELIVERIES, [{ delivery_id: deliveryId }]),
    runQueue(DELIVERIES, [{ delivery_id: deliveryId }]),
  ]);
  expect(await receiver.received()).toHaveLength(1);
  const retried = [...a.retryMessages, ...b.retryMessages];
  expect(retried).toHaveLength(1);
  expect(retried[0]!.delaySeconds).toBeGreaterThan(0);
  // When the waiting twin comes back, the delivery has succeeded: acknowledged, not sent.
  const later = await runQueue(DELIVERIES, [{ delivery_id: deliveryId }]);
  expect(later.explicitAcks).toHaveLength(1);
  expect(await receiver.received()).toHaveLength(1);
});

it("schedules the retry with the queue's delay, and honours a longer Retry-After", async () => {
  const { institution, hook } = await setup([
    { status: 503, headers: { "Retry-After": "120" } },
    { status: 500 },
  ]);
  const { deliveryId } = await insertDelivery(hook.id, institution.id);
  const first = await runQueue(DELIVERIES, [{ delivery_id: deliveryId }]);
  expect(first.retryMessages).toEqual([expect.objectContaining({ delaySeconds: 120 })]);
  const row = await deliveryRow(deliveryId);
  expect(row).toMatchObject({ status: "retrying", attempt_count: 1, last_response_status: 503 });
  expect(row!.next_attempt_at - Date.now()).toBeGreaterThan(110_000);

  // A message that comes back before its time (a crash, an early redelivery) is put back, not sent.
  const early = await runQueue(DELIVERIES, [{ delivery_id: deliveryId }]);
  expect(early.retryMessages[0]!.delaySeconds).toBeGreaterThan(100);
  expect((await deliveryRow(deliveryId))!.attempt_count).toBe(1);

  // Once due (the clock moved past the Retry-After), the second attempt fails with a plain 500: the
  // schedule's delay (1 s ± 20%) applies.
  advanceClock(121_000);
  const second = await runQueue(DELIVERIES, [{ delivery_id: deliveryId }]);
  expect(second.retryMessages[0]!.delaySeconds).toBeGreaterThanOrEqual(1);
  expect(second.retryMessages[0]!.delaySeconds).toBeLessThanOrEqual(2);
});

it("410 Gone fails the delivery at once and disables the webhook", async () => {
  const { admin, institution, hook } = await setup([{ status: 410 }]);
  const { deliveryId } = await insertDelivery(hook.id, institution.id);
  const result = await runQueue(DELIVERIES, [{ delivery_id: deliveryId }]);
  expect(result.retryMessages).toEqual([]);
  expect(await deliveryRow(deliveryId)).toMatchObject({
    status: "failed",
    attempt_count: 1,
    last_response_status: 410,
  });
  const { body } = await callJson(`/api/integrations/webhooks/${hook.id}`, { token: admin.token });
  expect(body).toMatchObject({ enabled: false, disabled_reason: "gone" });

  // Later deliveries of a disabled webhook are closed without a request.
  const { deliveryId: next } = await insertDelivery(hook.id, institution.id);
  await runQueue(DELIVERIES, [{ delivery_id: next }]);
  expect(await deliveryRow(next)).toMatchObject({
    status: "failed",
    attempt_count: 0,
    last_error: "Webhook disabled; not sent",
  });
});

it("disables a webhook after 20 consecutive failed events spanning more than a day, not before", async () => {
  const { admin, institution, hook, receiver } = await setup([], { status: 500 });
  const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
  const oneHourAgo = new Date(Date.now() - 3_600_000).toISOString();

  // 20 failures but all within the last hour: still enabled.
  await database(env.DB)
    .update(webhooks)
    .set({ consecutiveFailures: 19, failingSince: oneHourAgo })
    .where(eq(webhooks.id, hook.id));
  const { deliveryId: a } = await insertDelivery(hook.id, institution.id, {
    status: "retrying",
    attemptCount: 3,
  });
  await runQueue(DELIVERIES, [{ delivery_id: a }]);
  expect(await deliveryRow(a)).toMatchObject({ status: "failed", attempt_count: 4 });
  let webhook = (await callJson(`/api/integrations/webhooks/${hook.id}`, { token: admin.token })).body;
  expect(webhook).toMatchObject({ enabled: true, consecutive_failures: 20 });

  // The same run, begun two days ago: the next failed event switches it off.
  await database(env.DB).update(webhooks).set({ failingSince: twoDaysAgo }).where(eq(webhooks.id, hook.id));
  const { deliveryId: b } = await insertDelivery(hook.id, institution.id, {
    status: "retrying",
    attemptCount: 3,
  });
  await runQueue(DELIVERIES, [{ delivery_id: b }]);
  webhook = (await callJson(`/api/integrations/webhooks/${hook.id}`, { token: admin.token })).body;
  expect(webhook).toMatchObject({
    enabled: false,
    disabled_reason: "too_many_failures",
    consecutive_failures: 21,
  });
  expect(await receiver.received()).toHaveLength(2);

  // Re-enabling by PUT starts afresh.
  const put = await callJson(`/api/integrations/webhooks/${hook.id}`, {
    token: admin.token,
    method: "PUT",
    body: { enabled: true },
  });
  expect(put.body).toMatchObject({
    enabled: true,
    disabled_reason: null,
    consecutive_failures: 0,
    failing_since: null,
  });
});

it("a success resets the failure count", async () => {
  const { admin, institution, hook } = await setup();
  await database(env.DB)
    .update(webhooks)
    .set({ consecutiveFailures: 7, failingSince: new Date().toISOString() })
    .where(eq(webhooks.id, hook.id));
  const { deliveryId } = await insertDelivery(hook.id, institution.id);
  await runQueue(DELIVERIES, [{ delivery_id: deliveryId }]);
  const { body } = await callJson(`/api/integrations/webhooks/${hook.id}`, { token: admin.token });
  expect(body).toMatchObject({ consecutive_failures: 0, failing_since: null });
});

it("a dead-lettered delivery is closed as failed; a deleted webhook's message is dropped", async () => {
  const { admin, institution, hook, receiver } = await setup();
  const { deliveryId } = await insertDelivery(hook.id, institution.id, {
    status: "retrying",
    attemptCount: 2,
  });
  await runQueue("lingua-webhook-deliveries-dlq", [{ delivery_id: deliveryId }]);
  expect(await deliveryRow(deliveryId)).toMatchObject({
    status: "failed",
    last_error: expect.stringMatching(/Dead-lettered/),
  });

  const { deliveryId: orphan } = await insertDelivery(hook.id, institution.id);
  await callJson(`/api/integrations/webhooks/${hook.id}`, { token: admin.token, method: "DELETE" });
  const result = await runQueue(DELIVERIES, [{ delivery_id: orphan }, { nonsense: true }]);
  expect(result.explicitAcks).toHaveLength(2);
  expect(await receiver.received()).toEqual([]);
});

it("the scheduled sweep re-sends an event whose queue send was lost", async () => {
  const { institution, hook, receiver } = await setup();
  // An event committed two minutes ago that never reached the fan-out queue.
  const eventId = `evt_lost_${Date.now()}`;
  const created = new Date(Date.now() - 120_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  await database(env.DB).insert(outboxEvents).values({
    id: eventId,
    type: "lesson.completed",
    institutionId: institution.id,
    userId: null,
    payload: {},
    createdAt: created,
  });
  const ctx = createExecutionContext();
  await worker.scheduled!(
    createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const [got] = await receiver.waitFor(1);
  expect(JSON.parse(got!.body).id).toBe(eventId);
  expect(got!.headers["x-webhook-id"]).toBe(hook.id);
  const event = await waitUntil(async () => {
    const row = await database(env.DB)
      .select({ fannedOutAt: outboxEvents.fannedOutAt })
      .from(outboxEvents)
      .where(eq(outboxEvents.id, eventId))
      .get();
    return row?.fannedOutAt ? row : null;
  });
  expect(event).toBeTruthy();

  // Fanning the same event out again creates no second delivery.
  await runQueue("lingua-events", [{ event_ids: [eventId] }]);
  await new Promise((r) => setTimeout(r, 1500));
  expect(await receiver.received()).toHaveLength(1);
  expect(await database(env.DB).$count(webhookDeliveries, eq(webhookDeliveries.eventId, eventId))).toBe(1);
});

it("the scheduled sweep re-sends a delivery whose message was lost", async () => {
  const { institution, hook, receiver } = await setup();
  const { deliveryId } = await insertDelivery(hook.id, institution.id);
  await database(env.DB)
    .update(webhookDeliveries)
    .set({ nextAttemptAt: Date.now() - 3_600_000 })
    .where(eq(webhookDeliveries.id, deliveryId));
  const ctx = createExecutionContext();
  await worker.scheduled!(
    createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  await receiver.waitFor(1);
  await waitUntil(async () => (await deliveryRow(deliveryId))?.status === "succeeded");
});
