import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { webhooks } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { createWebhook, insertDelivery, waitUntil } from "./support";

it("the test ping answers with the delivery record; a failing receiver is reported, not retried, and health is untouched", async () => {
  const { admin } = await createTenant();
  const good = receiverEndpoint();
  const bad = receiverEndpoint();
  await bad.configure({ fallback: { status: 500, body: "nope" } });
  const okHook = await createWebhook(admin, { url: good.url, events: ["lesson.completed"] });
  const badHook = await createWebhook(admin, { url: bad.url, events: ["lesson.completed"], enabled: false });
  await good.configure({ secrets: [okHook.secret] });

  const ok = await callJson(`/api/integrations/webhooks/${okHook.id}/test`, {
    token: admin.token,
    method: "POST",
  });
  expect(ok.res.status).toBe(200);
  expect(ok.body).toMatchObject({
    webhook_id: okHook.id,
    event_type: "ping",
    status: "succeeded",
    attempt_count: 1,
    last_response_status: 200,
  });
  expect(ok.body.attempts[0].duration_ms).toEqual(expect.any(Number));
  const [ping] = await good.received();
  expect(JSON.parse(ping!.body)).toMatchObject({ type: "ping", data: { webhook_id: okHook.id } });
  expect(ping!.x_signature_valid).toEqual([true]);

  // A disabled webhook can be pinged (to check it before re-enabling); failure is reported once.
  const failed = await callJson(`/api/integrations/webhooks/${badHook.id}/test`, {
    token: admin.token,
    method: "POST",
  });
  expect(failed.body).toMatchObject({
    status: "failed",
    attempt_count: 1,
    last_response_status: 500,
    last_error: "HTTP 500",
  });
  expect(failed.body.attempts[0].response_body).toBe("nope");
  await new Promise((r) => setTimeout(r, 1500));
  expect(await bad.received()).toHaveLength(1);
  const hook = await callJson(`/api/integrations/webhooks/${badHook.id}`, { token: admin.token });
  expect(hook.body).toMatchObject({ consecutive_failures: 0, failing_since: null, enabled: false });

  // Pings are deliveries, not events.
  const events = await callJson("/api/integrations/events", { token: admin.token });
  expect(events.body.data).toEqual([]);
  // A receiver that is down is reported by its category, not the runtime's words.
  const down = await createWebhook(admin, { url: "http://127.0.0.1:9/hook", events: ["*"] });
  const unreachable = await callJson(`/api/integrations/webhooks/${down.id}/test`, {
    token: admin.token,
    method: "POST",
  });
  expect(unreachable.body).toMatchObject({
    status: "failed",
    last_response_status: null,
    last_error_code: "connection_failed",
    last_error: "Could not connect to the receiver",
  });
});

it("redeliver sends the same event again as a new delivery; unfinished and unknown deliveries are refused", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
  await receiver.configure({ secrets: [hook.secret] });
  const { deliveryId, eventId } = await insertDelivery(hook.id, institution.id, {
    status: "failed",
    attemptCount: 4,
  });

  const { res, body } = await callJson(
    `/api/integrations/webhooks/${hook.id}/deliveries/${deliveryId}/redeliver`,
    { token: admin.token, method: "POST" },
  );
  expect(res.status).toBe(202);
  expect(body).toMatchObject({
    status: "pending",
    event_id: eventId,
    redelivery_of: deliveryId,
    attempt_count: 0,
  });
  expect(body.id).not.toBe(deliveryId);
  expect(res.headers.get("Location")).toMatch(new RegExp(`/deliveries/${body.id}$`));
  const [got] = await receiver.waitFor(1);
  expect(got!.headers["x-webhook-delivery"]).toBe(body.id);
  expect(JSON.parse(got!.body).id).toBe(eventId);
  expect(got!.x_signature_valid).toEqual([true]);
  const done = await waitUntil(async () => {
    const d = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries/${body.id}`, {
      token: admin.token,
    });
    return d.body.status === "succeeded" ? d.body : null;
  });
  expect(done.attempts).toHaveLength(1);

  const { deliveryId: open } = await insertDelivery(hook.id, institution.id, {
    status: "retrying",
    attemptCount: 1,
  });
  const busy = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries/${open}/redeliver`, {
    token: admin.token,
    method: "POST",
  });
  expect(busy.res.status).toBe(409);
  const unknown = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries/dlv_nope/redeliver`, {
    token: admin.token,
    method: "POST",
  });
  expect(unknown.res.status).toBe(404);
  await callJson(`/api/integrations/webhooks/${hook.id}`, {
    token: admin.token,
    method: "PUT",
    body: { enabled: false },
  });
  const disabled = await callJson(
    `/api/integrations/webhooks/${hook.id}/deliveries/${deliveryId}/redeliver`,
    { token: admin.token, method: "POST" },
  );
  expect(disabled.res.status).toBe(409);
  expect(disabled.body.detail).toMatch(/disabled/);
});

it("recover redelivers each event whose latest delivery failed since the given time, once", async () => {
  const { admin, institution } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
  const hourAgo = Date.now() - 3_600_000;
  const recent1 = await insertDelivery(hook.id, institution.id, {
    status: "failed",
    createdAt: new Date(hourAgo + 60_000),
  });
  const recent2 = await insertDelivery(hook.id, institution.id, {
    status: "failed",
    createdAt: new Date(hourAgo + 120_000),
  });
  await insertDelivery(hook.id, institution.id, {
    status: "succeeded",
    createdAt: new Date(hourAgo + 180_000),
  });
  await insertDelivery(hook.id, institution.id, {
    status: "failed",
    createdAt: new Date(hourAgo - 3_600_000),
  });

  const since = new Date(hourAgo).toISOString();
  const { res, body } = await callJson(`/api/integrations/webhooks/${hook.id}/recover`, {
    token: admin.token,
    body: { since },
  });
  expect(res.status).toBe(202);
  expect(body).toMatchObject({ redelivered: 2, has_more: false });
  const got = await receiver.waitFor(2);
  expect(got.map((r) => JSON.parse(r.body).id).sort()).toEqual([recent1.eventId, recent2.eventId].sort());

  // The redeliveries are now the latest deliveries of those events: a second call finds nothing.
  await waitUntil(async () => {
    const log = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries?status=succeeded`, {
      token: admin.token,
    });
    return log.body.meta.total === 3;
  });
  const again = await callJson(`/api/integrations/webhooks/${hook.id}/recover`, {
    token: admin.token,
    body: { since },
  });
  expect(again.body).toMatchObject({ redelivered: 0 });

  for (const bad of [
    { since: new Date(Date.now() + 60_000).toISOString() },
    { since: new Date(Date.now() - 31 * 86_400_000).toISOString() },
    { since: "yesterday" },
    {},
  ]) {
    const r = await callJson(`/api/integrations/webhooks/${hook.id}/recover`, {
      token: admin.token,
      body: bad,
    });
    expect(r.res.status, JSON.stringify(bad)).toBe(422);
  }
});

it("rotation: both secrets sign for the window, new first; then only the new one", async () => {
  const { admin } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
  const rotated = await callJson(`/api/integrations/webhooks/${hook.id}/rotate-secret`, {
    token: admin.token,
    method: "POST",
  });
  expect(rotated.res.status).toBe(200);
  expect(rotated.body.secret).toMatch(/^whsec_/);
  expect(rotated.body.secret).not.toBe(hook.secret);
  const expires = Date.parse(rotated.body.previous_secret_expires_at);
  expect(Math.abs(expires - (Date.now() + 86_400_000))).toBeLessThan(60_000);

  await receiver.configure({ secrets: [rotated.body.secret, hook.secret] });
  await callJson(`/api/integrations/webhooks/${hook.id}/test`, { token: admin.token, method: "POST" });
  const [both] = await receiver.received();
  expect(both!.headers["x-signature-256"]).toMatch(/^[0-9a-f]{64},[0-9a-f]{64}$/);
  expect(both!.headers["webhook-signature"]).toMatch(/^v1,\S+ v1,\S+$/);
  expect(both!.x_signature_valid).toEqual([true, true]);
  expect(both!.standard_valid).toEqual([true, true]);

  // Rotating with no overlap retires the old secret at once.
  const now = await callJson(`/api/integrations/webhooks/${hook.id}/rotate-secret`, {
    token: admin.token,
    body: { previous_secret_ttl_seconds: 0 },
  });
  expect(now.body.previous_secret_expires_at).toBeNull();
  await receiver.configure({ secrets: [now.body.secret] });
  await callJson(`/api/integrations/webhooks/${hook.id}/test`, { token: admin.token, method: "POST" });
  const [single] = await receiver.received();
  expect(single!.headers["x-signature-256"]).toMatch(/^[0-9a-f]{64}$/);
  expect(single!.x_signature_valid).toEqual([true]);
  expect(single!.standard_valid).toEqual([true]);

  // An expired window stops the old secret signing, without another rotation.
  const third = await callJson(`/api/integrations/webhooks/${hook.id}/rotate-secret`, {
    token: admin.token,
    body: { previous_secret_ttl_seconds: 3600 },
  });
  await database(env.DB)
    .update(webhooks)
    .set({ previousSecretExpiresAt: new Date(Date.now() - 1000).toISOString() })
    .where(eq(webhooks.id, hook.id));
  await receiver.configure({ secrets: [third.body.secret] });
  await callJson(`/api/integrations/webhooks/${hook.id}/test`, { token: admin.token, method: "POST" });
  expect((await receiver.received())[0]!.x_signature_valid).toEqual([true]);
  const bad = await callJson(`/api/integrations/webhooks/${hook.id}/rotate-secret`, {
    token: admin.token,
    body: { previous_secret_ttl_seconds: -1 },
  });
  expect(bad.res.status).toBe(422);
});

it("the delivery log filters by status and event and pages newest first", async () => {
  const { admin, institution } = await createTenant();
  // Disabled: nothing is ever sent to a non-loopback address.
  const hook = await createWebhook(admin, {
    url: "https://hooks.example.com/x",
    events: ["*"],
    enabled: false,
  });
  const base = Date.now() - 600_000;
  const made = [];
  for (let i = 0; i < 5; i++) {
    made.push(
      await insertDelivery(hook.id, institution.id, {
        status: i % 2 ? "failed" : "succeeded",
        type: i < 3 ? "lesson.completed" : "course.completed",
        createdAt: new Date(base + i * 1000),
      }),
    );
  }
  const page1 = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries?per_page=2`, {
    token: admin.token,
  });
  expect(page1.body.meta).toEqual({ total: 5, per_page: 2, current_page: 1, last_page: 3 });
  expect(page1.body.data.map((d: any) => d.id)).toEqual([made[4]!.deliveryId, made[3]!.deliveryId]);
  const failed = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries?status=failed`, {
    token: admin.token,
  });
  expect(failed.body.data.map((d: any) => d.id)).toEqual([made[3]!.deliveryId, made[1]!.deliveryId]);
  const courses = await callJson(
    `/api/integrations/webhooks/${hook.id}/deliveries?event=course.completed&status=succeeded`,
    { token: admin.token },
  );
  expect(courses.body.data.map((d: any) => d.id)).toEqual([made[4]!.deliveryId]);
  const bad = await callJson(`/api/integrations/webhooks/${hook.id}/deliveries?status=lost&event=nope`, {
    token: admin.token,
  });
  expect(bad.res.status).toBe(422);
  expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["event", "status"]);
});
