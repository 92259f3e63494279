import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { advanceClock, clockNow, resetClock } from "../../src/platform/service/clock";
import { runSweeps } from "../../src/scheduled";
import { HeldQueue } from "../exports/support";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, deliveryRow, insertDelivery, runQueue } from "./support";

const DELIVERIES = "lingua-webhook-deliveries";

/**
 * A D1 binding that stops answering `afterMs` after its first batch (the consumer's claim) returned:
 * from then on every statement fails, as if the invocation had crashed at that moment. Whatever the
 * consumer had written before stays written; nothing after it is.
 */
function crashingDatabase(real: D1Database, afterMs: number): D1Database {
  let crashAt = Number.POSITIVE_INFINITY;
  const dead = () => Date.now() >= crashAt;
  const crashing: D1Database = {
    prepare: (query: string) => {
      if (dead()) throw new Error("crashed: D1 is gone");
      return real.prepare(query);
    },
    batch: async (statements: D1PreparedStatement[]) => {
      if (dead()) throw new Error("crashed: D1 is gone");
      const result = await real.batch(statements);
      if (crashAt === Number.POSITIVE_INFINITY) crashAt = Date.now() + afterMs;
      if (dead()) throw new Error("crashed: D1 is gone");
      return result;
    },
    exec: (query: string) => real.exec(query),
    dump: () => real.dump(),
    // The service context runs every query in a session: this binding is its own.
    withSession: () => ({ ...crashing, getBookmark: () => null }),
  } as D1Database;
  return crashing;
}

it("a crash mid-batch re-sends only what was in flight: a delivery the receiver already accepted is not sent again", async () => {
  const tenant = await createTenant();
  const receiver = receiverEndpoint();
  // Six sends at a time: the first six are answered at once, the next six slowly (within the time-out).
  const fast = Array.from({ length: 6 }, () => ({ status: 200 }));
  const slow = Array.from({ length: 6 }, () => ({ status: 200, delay_ms: 800 }));
  await receiver.configure({ script: [...fast, ...slow], fallback: { status: 200 } });
  const hook = await createWebhook(tenant.admin, { url: receiver.url, events: ["*"] });
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await insertDelivery(hook.id, tenant.institution.id)).deliveryId);
  const bodies = ids.map((id) => ({ delivery_id: id }));

  // The invocation dies 400 ms after its claim: the fast six were answered long before, the slow six
  // were still in flight.
  await expect(runQueue(DELIVERIES, bodies, { DB: crashingDatabase(env.DB, 400) })).rejects.toThrow(
    /crashed/,
  );
  const answeredBeforeCrash = (await receiver.received())
    .slice(0, 6)
    .map((r) => r.headers["x-webhook-delivery"]);
  expect(answeredBeforeCrash).toHaveLength(6);

  // The queue hands every message over again once the claims have lapsed.
  await database(env.DB)
    .update(webhookDeliveries)
    .set({ claimedUntil: 1 })
    .where(inArray(webhookDeliveries.id, ids));
  await runQueue(DELIVERIES, bodies);

  const received = (await receiver.received()).map((r) => r.headers["x-webhook-delivery"]);
  const timesSent = (id: string | undefined) => received.filter((r) => r === id).length;
  // Each delivery the receiver answered before the crash reached it exactly once...
  for (const id of answeredBeforeCrash) expect(timesSent(id)).toBe(1);
  // ...only the six in flight at the crash may have been sent twice, and every delivery succeeded.
  expect(received.length).toBeLessThanOrEqual(12 + 6);
  for (const id of ids) {
    expect(timesSent(id)).toBeGreaterThanOrEqual(1);
    expect(await deliveryRow(id)).toMatchObject({ status: "succeeded" });
  }
});

/** The minute cron's sweeps at the test clock's time, with a held delivery queue. */
async function sweepInto(queue: HeldQueue) {
  const ctx = createExecutionContext();
  await runSweeps({ ...env, WEBHOOK_QUEUE: queue as unknown as Queue }, ctx, clockNow());
  await waitOnExecutionContext(ctx);
}

describe("a lost delivery message", () => {
  afterEach(() => resetClock());

  it("a retry whose message is lost is sent again by the minute sweep about a minute after it was due, delivered once; the late original sends nothing", async () => {
    const tenant = await createTenant();
    const receiver = receiverEndpoint();
    await receiver.configure({ script: [{ status: 500 }], fallback: { status: 200 } });
    const hook = await createWebhook(tenant.admin, { url: receiver.url, events: ["*"] });
    const { deliveryId } = await insertDelivery(hook.id, tenant.institution.id);
    const message = { delivery_id: deliveryId };

    // The first attempt fails; its message goes back to the queue with the retry's delay and is lost.
    const first = await runQueue(DELIVERIES, [message]);
    expect(first.retryMessages).toHaveLength(1);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "retrying", attempt_count: 1 });

    // While the retry is due (within the grace), nothing is sent.
    const queue = new HeldQueue();
    await sweepInto(queue);
    expect(queue.messages).toEqual([]);

    // Two minutes on: one new message, however many sweeps run at that time.
    advanceClock(2 * 60_000);
    await Promise.all([sweepInto(queue), sweepInto(queue)]);
    expect(queue.messages).toEqual([message]);
    expect((await runQueue(DELIVERIES, queue.messages)).explicitAcks).toHaveLength(1);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "succeeded", attempt_count: 2 });

    // The lost message turns up after all: acknowledged, nothing sent.
    const late = await runQueue(DELIVERIES, [message]);
    expect(late.explicitAcks).toHaveLength(1);
    const sent = (await receiver.received()).map((r) => r.headers["x-webhook-delivery"]);
    expect(sent).toEqual([deliveryId, deliveryId]);
  });

  it("a delivery waiting out a long retry delay is not taken for lost, nor one whose attempt holds a live claim", async () => {
    const tenant = await createTenant();
    const receiver = receiverEndpoint();
    const hook = await createWebhook(tenant.admin, { url: receiver.url, events: ["*"] });
    const waiting = await insertDelivery(hook.id, tenant.institution.id, { status: "retrying" });
    const claimed = await insertDelivery(hook.id, tenant.institution.id);
    const lost = await insertDelivery(hook.id, tenant.institution.id);
    const now = clockNow();
    const db = database(env.DB);
    await db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: now + 3_600_000 })
      .where(eq(webhookDeliveries.id, waiting.deliveryId));
    advanceClock(2 * 60_000);
    await db
      .update(webhookDeliveries)
      .set({ claimedUntil: clockNow() + 30_000 })
      .where(eq(webhookDeliveries.id, claimed.deliveryId));
    const queue = new HeldQueue();
    await sweepInto(queue);
    expect(queue.messages).toEqual([{ delivery_id: lost.deliveryId }]);
    // An hour later the waiting one is due, and it too is sent again if its message is lost.
    advanceClock(3_600_000);
    const later = new HeldQueue();
    await sweepInto(later);
    expect(later.messages).toEqual(
      expect.arrayContaining([{ delivery_id: waiting.deliveryId }, { delivery_id: claimed.deliveryId }]),
    );
  });
});
