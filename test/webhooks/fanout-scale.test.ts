import { env } from "cloudflare:test";
import { and, eq, like } from "drizzle-orm";
import { expect, it } from "vitest";
import { outboxEvents, webhookDeliveries } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, runQueue } from "./support";

it("handles full batches: 100 events fanned out to 10 webhooks, then 100 deliveries sent in one invocation", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  await receiver.configure({});
  const hooks = [];
  for (let h = 0; h < 10; h++)
    hooks.push(await createWebhook(admin, { url: `${receiver.url}?h=${h}`, events: ["*"] }));
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  const ids = Array.from({ length: 100 }, (_, i) => `evt_scale_${i}`);
  const db = database(env.DB);
  const rows = ids.map((id) => ({
    id,
    type: "lesson.completed",
    institutionId: institution.id,
    payload: {},
    createdAt: now,
  }));
  // Five columns a row: 20 rows a statement stay within D1's 100 bound parameters.
  for (let i = 0; i < rows.length; i += 20) await db.insert(outboxEvents).values(rows.slice(i, i + 20));

  const fanned = await runQueue(
    "lingua-events",
    ids.map((id) => ({ event_ids: [id] })),
  );
  expect(fanned.retryMessages).toEqual([]);
  const ofThisTest = like(webhookDeliveries.eventId, "evt_scale_%");
  const results = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(ofThisTest)
    .orderBy(webhookDeliveries.id);
  expect(results).toHaveLength(1000);

  // The fan-out made these first attempts itself (or queued what its budget did not reach); a message
  // for a delivery is sent only by whoever holds its claim, anything else acknowledges it unsent.
  const direct = await runQueue(
    "lingua-webhook-deliveries",
    results.slice(0, 100).map((r) => ({ delivery_id: r.id })),
  );
  expect(direct.explicitAcks.length + direct.retryMessages.length).toBe(100);
  const got = await receiver.waitFor(1000, 60_000);
  await new Promise((r) => setTimeout(r, 1000));
  expect(await receiver.received()).toHaveLength(1000);
  expect(new Set(got.map((r) => r.headers["x-webhook-delivery"])).size).toBe(1000);
  const done = await db.$count(
    webhookDeliveries,
    and(ofThisTest, eq(webhookDeliveries.status, "succeeded"), eq(webhookDeliveries.attemptCount, 1)),
  );
  expect(done).toBe(1000);
  expect(hooks).toHaveLength(10);
});
