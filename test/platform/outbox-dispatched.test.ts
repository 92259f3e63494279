import { env } from "cloudflare:test";
import { eq, like } from "drizzle-orm";
import { expect, it } from "vitest";
import { outboxEvents } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { undispatchedEvents } from "../../src/platform/outbox-sweep";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook } from "../webhooks/support";

const BACKFILL = "outbox_dispatched_backfill";
const db = () => database(env.DB);

it("the back-fill marks events fanned out before the marker existed as dispatched, and only those", async () => {
  const fannedOut = "2026-11-01T10:00:00Z";
  const event = { type: "member.created", payload: {}, createdAt: "2026-11-01T09:59:00Z" };
  await db()
    .insert(outboxEvents)
    .values([
      { ...event, id: "evt_bf_fanned", fannedOutAt: fannedOut, dispatchedAt: null },
      { ...event, id: "evt_bf_open", fannedOutAt: null, dispatchedAt: null },
      { ...event, id: "evt_bf_marked", fannedOutAt: fannedOut, dispatchedAt: "2026-11-01T10:05:00Z" },
    ]);
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.includes(BACKFILL));
  if (!migration) throw new Error(`no ${BACKFILL} migration`);
  await env.DB.batch(migration.queries.map((q) => env.DB.prepare(q)));
  const results = await db()
    .select({ id: outboxEvents.id, dispatchedAt: outboxEvents.dispatchedAt })
    .from(outboxEvents)
    .where(like(outboxEvents.id, "evt_bf_%"))
    .orderBy(outboxEvents.id);
  expect(results).toEqual([
    { id: "evt_bf_fanned", dispatchedAt: fannedOut },
    { id: "evt_bf_marked", dispatchedAt: "2026-11-01T10:05:00Z" },
    { id: "evt_bf_open", dispatchedAt: null },
  ]);
});

it("outbox_events has a partial index for the sweep, which the sweep's scan reads (and one for the purge of internal events)", async () => {
  const { results: indexes } = await env.DB.prepare(
    "SELECT name FROM pragma_index_list('outbox_events') WHERE origin = 'c' ORDER BY name",
  ).all<{ name: string }>();
  expect(indexes.map((i) => i.name)).toEqual([
    "outbox_events_created_idx",
    "outbox_events_institution_idx",
    "outbox_events_internal_idx",
    "outbox_events_type_idx",
    "outbox_events_undispatched_idx",
  ]);
  const scan = undispatchedEvents(db(), Date.now()).toSQL();
  const { results: plan } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${scan.sql}`)
    .bind(...scan.params)
    .all<{ detail: string }>();
  expect(plan.map((p) => p.detail).join("\n")).toContain("outbox_events_undispatched_idx");
});

it("a test ping's event is written dispatched: the sweep never re-sends it", async () => {
  const { admin } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["lesson.completed"] });
  const ping = await callJson(`/api/integrations/webhooks/${hook.id}/test`, {
    token: admin.token,
    method: "POST",
  });
  expect(ping.res.status).toBe(200);
  const row = await db()
    .select({ type: outboxEvents.type, dispatchedAt: outboxEvents.dispatchedAt })
    .from(outboxEvents)
    .where(eq(outboxEvents.id, ping.body.event_id))
    .get();
  expect(row?.type).toBe("ping");
  expect(row?.dispatchedAt).not.toBeNull();
});
