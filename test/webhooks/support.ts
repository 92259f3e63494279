import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import type { TestUser } from "../helpers/tenants";

export async function createWebhook(admin: TestUser, body: Record<string, unknown>) {
  const { res, body: created } = await callJson("/api/integrations/webhooks", { token: admin.token, body });
  if (res.status !== 201)
    throw new Error(`webhook creation failed: ${res.status} ${JSON.stringify(created)}`);
  return created as { id: string; secret: string; [key: string]: unknown };
}

/** A one-lesson course, and a learner's attempts at every item of it: one `lesson.completed`. */
export async function completeALesson(learner: TestUser, itemsPerBlock = 2) {
  const course = await createPublishedCourse({
    lessons: 1,
    blocksPerLesson: 1,
    itemsPerBlock,
    skills: ["reading"],
    levels: ["A1"],
    xp: 10,
  });
  const occurredAt = new Date(Date.now() - 60_000).toISOString();
  const attempts = course.items.map((id) => ({
    id: crypto.randomUUID(),
    training_item_id: id,
    score: 1,
    correct: true,
    duration_seconds: 20,
    occurred_at: occurredAt,
  }));
  const { res, body } = await callJson("/api/progress/attempts", {
    token: learner.token,
    body: { attempts },
  });
  if (res.status !== 200) throw new Error(`attempts failed: ${res.status} ${JSON.stringify(body)}`);
  return { course, events: body.summary.events as { id: string; type: string }[] };
}

export async function waitUntil<T>(
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { eq, getTableColumns, type SQL } from "drizzle-orm";
import { type DeliveryStatus, outboxEvents, webhookDeliveries } from "../../src/db/schema";
import worker from "../../src/index";
import { database } from "../../src/platform/db";

let sequence = 0;

/**
 * An event (already dispatched) and its delivery to `webhookId`, written straight to D1 with no queue
 * message, so a test can hand the delivery to the consumer itself (and nothing else races it).
 */
export async function insertDelivery(
  webhookId: string,
  institutionId: string,
  options: { status?: string; attemptCount?: number; createdAt?: Date; type?: string } = {},
): Promise<{ deliveryId: string; eventId: string }> {
  sequence += 1;
  const tag = `${Date.now().toString(36)}${sequence}${Math.random().toString(36).slice(2, 6)}`;
  const eventId = `evt_t_${tag}`;
  const deliveryId = `dlv_t_${tag}`;
  const created = (options.createdAt ?? new Date()).toISOString().replace(/\.\d{3}Z$/, "Z");
  const type = options.type ?? "lesson.completed";
  const db = database(env.DB);
  await db.batch([
    db.insert(outboxEvents).values({
      id: eventId,
      type,
      institutionId,
      userId: null,
      payload: { lesson_id: "les_x", tag },
      createdAt: created,
      fannedOutAt: created,
      dispatchedAt: created,
    }),
    db.insert(webhookDeliveries).values({
      id: deliveryId,
      webhookId,
      eventId,
      eventType: type,
      status: (options.status ?? "pending") as DeliveryStatus,
      attemptCount: options.attemptCount ?? 0,
      nextAttemptAt: Date.now(),
      createdAt: created,
      completedAt: options.status === "failed" || options.status === "succeeded" ? created : null,
    }),
  ]);
  return { deliveryId, eventId };
}

/** Hands messages to the worker's queue handler as the Queues runtime would, and reports what it did. */
export async function runQueue(queue: string, bodies: unknown[], overrides: Partial<Cloudflare.Env> = {}) {
  const batch = createMessageBatch(
    queue,
    bodies.map((body, i) => ({
      id: `msg-${Date.now()}-${i}-${Math.random()}`,
      timestamp: new Date(),
      attempts: 1,
      body,
    })),
  );
  // The harness records which messages were retried but not their delay: note it on the way.
  const delays = new Map<string, number | undefined>();
  const messages = batch.messages.map((message) => {
    const retry = message.retry.bind(message);
    return {
      id: message.id,
      timestamp: message.timestamp,
      attempts: message.attempts,
      body: message.body,
      retry: (options?: QueueRetryOptions) => {
        delays.set(message.id, options?.delaySeconds);
        retry(options);
      },
      ack: () => message.ack(),
    } as Message<unknown>;
  });
  const observed = {
    queue: batch.queue,
    messages,
    ackAll: () => batch.ackAll(),
    retryAll: (options?: QueueRetryOptions) => batch.retryAll(options),
  } as unknown as MessageBatch<unknown>;
  const ctx = createExecutionContext();
  await worker.queue!(observed, { ...env, ...overrides }, ctx);
  const result = await getQueueResult(batch, ctx);
  return {
    ...result,
    retryMessages: result.retryMessages.map((m: { msgId: string }) => ({
      ...m,
      delaySeconds: delays.get(m.msgId),
    })),
  };
}

/**
 * Every column of webhook_deliveries, keyed by its SQL name (`attempt_count`, `claimed_until`, …), the
 * shape the tests compare rows in. Its columns have no drizzle modes, so the values are as stored.
 */
const deliveryColumns = Object.fromEntries(
  Object.values(getTableColumns(webhookDeliveries)).map((column) => [column.name, column]),
);

/** Deliveries (all columns, by SQL name) matching `where`, in id order. */
export async function deliveryRows(where: SQL | undefined): Promise<Record<string, any>[]> {
  return database(env.DB)
    .select(deliveryColumns)
    .from(webhookDeliveries)
    .where(where)
    .orderBy(webhookDeliveries.id);
}

export async function deliveryRow(id: string): Promise<Record<string, any> | null> {
  return (await deliveryRows(eq(webhookDeliveries.id, id)))[0] ?? null;
}
