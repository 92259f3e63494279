import { env } from "cloudflare:test";
import { expect, it } from "vitest";
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
  await env.DB.batch(
    ids.map((id) =>
      env.DB.prepare(
        "INSERT INTO outbox_events (id, type, institution_id, payload, created_at) VALUES (?, 'lesson.completed', ?, '{}', ?)",
      ).bind(id, institution.id, now),
    ),
  );
  const fanned = await runQueue(
    "lingua-events",
    ids.map((id) => ({ event_id: id })),
  );
  expect(fanned.retryMessages).toEqual([]);
  const { results } = await env.DB.prepare(
    "SELECT id FROM webhook_deliveries WHERE event_id LIKE 'evt_scale_%' ORDER BY id",
  ).all<{ id: string }>();
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
  const done = await env.DB.prepare(
    "SELECT count(*) AS n FROM webhook_deliveries WHERE event_id LIKE 'evt_scale_%' AND status = 'succeeded' AND attempt_count = 1",
  ).first<{ n: number }>();
  expect(done!.n).toBe(1000);
  expect(hooks).toHaveLength(10);
});
