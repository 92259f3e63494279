import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhookDeliveries, webhooks } from "../../src/db/schema";
import {
  CREATE_WEBHOOK_SQL,
  DELIVERY_DETAILS_SQL,
  type DeliveryDetailsRow,
  FAN_OUT_EVENTS_SQL,
  type FanOutEventRow,
  INSERT_DELIVERIES_SQL,
  SUBSCRIBED_HOOKS_SQL,
  type SubscribedHookRow,
} from "../../src/domains/webhooks/sql";
import { database } from "../../src/platform/db";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, insertDelivery } from "./support";

// Each statement of src/domains/webhooks/sql.ts against the test database, fixtures through the API
// or drizzle.

const db = () => database(env.DB);

describe("CREATE_WEBHOOK_SQL", () => {
  it("inserts a webhook while the institution is under the limit, and nothing at the limit", async () => {
    const { admin, institution } = await createTenant();
    const insert = (id: string, limit: number) =>
      env.DB.prepare(CREATE_WEBHOOK_SQL)
        .bind(
          id,
          institution.id,
          "https://hooks.example.com/x",
          "d",
          JSON.stringify(["*"]),
          1,
          null,
          null,
          "v2.sealed",
          admin.id,
          "2026-11-01T00:00:00Z",
          limit,
        )
        .run();
    expect((await insert("whk_sql_a", 1)).meta.changes).toBe(1);
    expect((await insert("whk_sql_b", 1)).meta.changes).toBe(0);
    const rows = await db().select().from(webhooks).where(eq(webhooks.institutionId, institution.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: "whk_sql_a",
      url: "https://hooks.example.com/x",
      events: ["*"],
      enabled: true,
      consecutiveFailures: 0,
      createdBy: admin.id,
      createdAt: "2026-11-01T00:00:00Z",
      updatedAt: "2026-11-01T00:00:00Z",
    });
  });
});

describe("FAN_OUT_EVENTS_SQL", () => {
  it("reads the events named, with their payload as JSON text", async () => {
    const { admin, institution } = await createTenant();
    const hook = await createWebhook(admin, { url: receiverEndpoint().url, events: ["*"] });
    const { eventId } = await insertDelivery(hook.id, institution.id, { type: "course.completed" });
    const { results } = await env.DB.prepare(FAN_OUT_EVENTS_SQL)
      .bind(JSON.stringify([eventId, "evt_missing"]))
      .all<FanOutEventRow>();
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      id: eventId,
      type: "course.completed",
      institution_id: institution.id,
    });
    expect(results[0]?.fanned_out_at).not.toBeNull();
    expect(JSON.parse(results[0]?.payload ?? "{}")).toMatchObject({ lesson_id: "les_x" });
  });
});

describe("SUBSCRIBED_HOOKS_SQL", () => {
  it("reads the enabled webhooks of the institutions named, not the disabled ones", async () => {
    const { admin, institution } = await createTenant();
    const on = await createWebhook(admin, { url: receiverEndpoint().url, events: ["lesson.completed"] });
    await createWebhook(admin, { url: receiverEndpoint().url, events: ["*"], enabled: false });
    const { results } = await env.DB.prepare(SUBSCRIBED_HOOKS_SQL)
      .bind(JSON.stringify([institution.id]))
      .all<SubscribedHookRow>();
    expect(results.map((r) => r.id)).toEqual([on.id]);
    expect(results[0]).toMatchObject({ institution_id: institution.id, consecutive_failures: 0 });
    expect(JSON.parse(results[0]?.events ?? "[]")).toEqual(["lesson.completed"]);
    expect(results[0]?.secret_sealed).toMatch(/^v2\./);
  });
});

describe("INSERT_DELIVERIES_SQL", () => {
  it("inserts the rows (a direct one claimed, its attempt counted), skips an existing pair, returns the ids inserted", async () => {
    const { admin, institution } = await createTenant();
    const a = await createWebhook(admin, { url: receiverEndpoint().url, events: ["*"] });
    const b = await createWebhook(admin, { url: receiverEndpoint().url, events: ["*"] });
    const { eventId } = await insertDelivery(a.id, institution.id);
    const rows = [
      ["dlv_sql_dup", a.id, eventId, "lesson.completed", 0],
      ["dlv_sql_direct", b.id, eventId, "lesson.completed", 1],
    ];
    const { results } = await env.DB.prepare(INSERT_DELIVERIES_SQL)
      .bind(JSON.stringify(rows), 5_000, 1_000, "2026-11-01T00:00:00Z")
      .all<{ id: string }>();
    expect(results).toEqual([{ id: "dlv_sql_direct" }]);
    const direct = await db()
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, "dlv_sql_direct"))
      .get();
    expect(direct).toMatchObject({
      webhookId: b.id,
      eventId,
      status: "pending",
      attemptCount: 1,
      claimedUntil: 5_000,
      nextAttemptAt: 1_000,
      createdAt: "2026-11-01T00:00:00Z",
    });
  });
});

describe("DELIVERY_DETAILS_SQL", () => {
  it("reads each delivery with its webhook and event", async () => {
    const { admin, institution } = await createTenant();
    const url = receiverEndpoint().url;
    const hook = await createWebhook(admin, { url, events: ["*"] });
    const { deliveryId, eventId } = await insertDelivery(hook.id, institution.id);
    const { results } = await env.DB.prepare(DELIVERY_DETAILS_SQL)
      .bind(JSON.stringify([deliveryId]))
      .all<DeliveryDetailsRow>();
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      id: deliveryId,
      status: "pending",
      claimed_until: null,
      webhook_id: hook.id,
      url: new URL(url).toString(),
      enabled: 1,
      event_id: eventId,
      event_type: "lesson.completed",
      previous_secret_sealed: null,
    });
    expect(JSON.parse(results[0]?.payload ?? "{}")).toMatchObject({ lesson_id: "les_x" });
  });
});
