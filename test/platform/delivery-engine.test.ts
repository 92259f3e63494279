import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { z } from "zod";
import { webhookDeliveries } from "../../src/db/schema";
import {
  type DeliveryTarget,
  deliverBatch,
  openFirstAttempts,
  type Verdict,
  type WorkState,
} from "../../src/platform/delivery";
import { testContext } from "../helpers/context";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, deliveryRow, insertDelivery } from "../webhooks/support";

// The engine with a made-up target over the webhook deliveries table: its "send" is a function of the
// test, so the order of answers, and what the engine has written and settled meanwhile, are observable.

interface Item {
  id: string;
  attempt: number;
}

function fakeTarget(
  send: (item: Item) => Promise<Verdict>,
  record?: () => void,
): DeliveryTarget<{ delivery_id: string }, WorkState, Item, Verdict> {
  return {
    name: "fake",
    table: "webhook_deliveries",
    message: {
      schema: z.object({ delivery_id: z.string().min(1) }),
      idOf: (body) => body.delivery_id,
      of: (id) => ({ delivery_id: id }),
    },
    queue: (e) => e.WEBHOOK_QUEUE,
    deadLetter: (e) => e.WEBHOOK_DLQ,
    deadLetteredError: "dead",
    leaseMs: () => 60_000,
    prepare: (_ctx, claimed) => ({
      send: claimed.map(({ row, attempt }) => ({ id: row.id, attempt })),
      close: [],
    }),
    send: (_ctx, item) => send(item),
    record: (ctx, attempts) => {
      record?.();
      const db = ctx.db;
      return attempts.map(({ item, result }) =>
        db
          .update(webhookDeliveries)
          .set({ status: result.status, claimedUntil: null })
          .where(and(eq(webhookDeliveries.id, item.id), eq(webhookDeliveries.attemptCount, item.attempt))),
      );
    },
  };
}

async function deliveries(count: number) {
  const { admin, institution } = await createTenant();
  const hook = await createWebhook(admin, { url: receiverEndpoint().url, events: ["*"] });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await insertDelivery(hook.id, institution.id)).deliveryId);
  return ids;
}

/** Runs the engine over one message per id; notes each message's settlement as it happens. */
async function run(target: ReturnType<typeof fakeTarget>, ids: string[], onSettle?: (id: string) => void) {
  const batch = createMessageBatch(
    "lingua-webhook-deliveries",
    ids.map((id, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body: { delivery_id: id } })),
  );
  const settled = new Map<string, { at: number; delaySeconds?: number; acked: boolean }>();
  const messages = batch.messages.map(
    (message, i) =>
      ({
        id: message.id,
        timestamp: message.timestamp,
        attempts: message.attempts,
        body: message.body,
        ack: () => {
          settled.set(ids[i]!, { at: Date.now(), acked: true });
          message.ack();
          onSettle?.(ids[i]!);
        },
        retry: (options?: QueueRetryOptions) => {
          settled.set(ids[i]!, { at: Date.now(), acked: false, delaySeconds: options?.delaySeconds });
          message.retry(options);
        },
      }) as Message<unknown>,
  );
  const observed = { queue: batch.queue, messages } as unknown as MessageBatch<unknown>;
  const ctx = createExecutionContext();
  const outcome = await deliverBatch(testContext(), target, observed).then(
    () => null,
    (error: unknown) => error,
  );
  return { outcome, settled, result: await getQueueResult(batch, ctx) };
}

it("records each attempt and settles its message as soon as it is answered, not when the batch ends", async () => {
  const [fast, slow] = await deliveries(2);
  let fastAcked: () => void = () => {};
  const acked = new Promise<string>((resolve) => {
    fastAcked = () => resolve("acked");
  });
  let seenBySlow: { waited: string; status: string } | null = null;
  const target = fakeTarget(async (item) => {
    if (item.id === fast) return { status: "succeeded" };
    // The slow one answers only once the fast one is written and acknowledged (or gives up after 5 s).
    const waited = await Promise.race([
      acked,
      new Promise<string>((r) => setTimeout(() => r("timed out"), 5_000)),
    ]);
    seenBySlow = { waited, status: (await deliveryRow(fast!))!.status };
    return { status: "succeeded" };
  });
  const { outcome, settled } = await run(target, [fast!, slow!], (id) => {
    if (id === fast) fastAcked();
  });
  expect(outcome).toBeNull();
  expect(seenBySlow).toEqual({ waited: "acked", status: "succeeded" });
  expect(settled.get(slow!)).toMatchObject({ acked: true });
  expect(await deliveryRow(slow!)).toMatchObject({ status: "succeeded", attempt_count: 1 });
});

it("a retrying verdict hands the message back with its delay; a send that throws comes back after 30 s", async () => {
  const [retrying, throwing, done] = await deliveries(3);
  const target = fakeTarget(async (item) => {
    if (item.id === retrying) return { status: "retrying", retryInSeconds: 41.2 };
    if (item.id === throwing) throw new Error("a bug in the target");
    return { status: "succeeded" };
  });
  const { outcome, settled } = await run(target, [retrying!, throwing!, done!]);
  expect(outcome).toBeNull();
  expect(settled.get(retrying!)).toMatchObject({ acked: false, delaySeconds: 42 });
  expect(settled.get(throwing!)).toMatchObject({ acked: false, delaySeconds: 30 });
  expect(settled.get(done!)).toMatchObject({ acked: true });
  expect(await deliveryRow(retrying!)).toMatchObject({ status: "retrying", attempt_count: 1 });
  // The claim of the one that threw holds: a twin waits rather than sends.
  expect((await deliveryRow(throwing!))!.claimed_until).toBeGreaterThan(Date.now());
});

it("when an attempt cannot be recorded, no further send starts and the invocation fails, its messages unsettled", async () => {
  const ids = await deliveries(8);
  const sent: string[] = [];
  const target = fakeTarget(
    async (item) => {
      sent.push(item.id);
      // The first answers at once; the other five of the first round a little later.
      if (item.id !== ids[0]) await new Promise((r) => setTimeout(r, 200));
      return { status: "succeeded" };
    },
    () => {
      throw new Error("D1 is gone");
    },
  );
  const { outcome, settled } = await run(target, ids);
  expect(String(outcome)).toMatch(/D1 is gone/);
  // The first round of six, and the one that took the first answer's place before its record
  // failed, were sent; the last was never started.
  expect(sent).toHaveLength(7);
  expect(sent).not.toContain(ids[7]);
  expect(settled.size).toBe(0);
});

it("first attempts handed over in parts (an offer's commits) share six lanes: a later part waits for a free one, in order", async () => {
  const ids = await deliveries(10);
  let open = 0;
  let most = 0;
  const started: string[] = [];
  const target = fakeTarget(async (item) => {
    open += 1;
    most = Math.max(most, open);
    started.push(item.id);
    await new Promise((resolve) => setTimeout(resolve, 20));
    open -= 1;
    return { status: "succeeded" };
  });
  const ctx = testContext();
  const first = openFirstAttempts(ctx, target, { deadline: ctx.now() + 60_000, lease: ctx.now() + 120_000 });
  first.add(ids.slice(0, 4).map((id) => ({ id, attempt: 1 })));
  first.add(ids.slice(4).map((id) => ({ id, attempt: 1 })));
  const { attempts, released } = await first.done();

  expect(most).toBe(6);
  expect(started).toEqual(ids);
  expect(attempts.map((a) => a.item.id).sort()).toEqual([...ids].sort());
  expect(released).toEqual([]);
});
