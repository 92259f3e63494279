import { expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { completeALesson, createWebhook, waitUntil } from "./support";

async function deliveries(token: string, hookId: string, query = "") {
  const { res, body } = await callJson(`/api/integrations/webhooks/${hookId}/deliveries${query}`, { token });
  expect(res.status).toBe(200);
  return body.data as any[];
}

it("fans an event out only to the enabled webhooks of its institution that subscribe to its type", async () => {
  const { admin, learner } = await createTenant();
  const other = await createTenant();
  const [lessons, courses, disabled, everything, foreign] = Array.from({ length: 5 }, () =>
    receiverEndpoint(),
  );
  const hLessons = await createWebhook(admin, { url: lessons!.url, events: ["lesson.completed"] });
  await createWebhook(admin, { url: courses!.url, events: ["course.completed"] });
  await createWebhook(admin, { url: disabled!.url, events: ["*"], enabled: false });
  const hAll = await createWebhook(admin, { url: everything!.url, events: ["*"] });
  await createWebhook(other.admin, { url: foreign!.url, events: ["*"] });
  await lessons!.configure({ secrets: [hLessons.secret] });

  const { events } = await completeALesson(learner);
  const lessonEvent = events.find((e) => e.type === "lesson.completed")!;
  expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["lesson.completed", "course.completed"]));

  const [received] = await lessons!.waitFor(1);
  await courses!.waitFor(1);
  const all = await everything!.waitFor(events.length);
  expect(all.map((r) => JSON.parse(r.body).id).sort()).toEqual(events.map((e) => e.id).sort());

  // The body and headers of CONVENTIONS.md, signed both ways over the exact bytes.
  const body = JSON.parse(received!.body);
  expect(Object.keys(body)).toEqual(["id", "type", "created_at", "data"]);
  expect(body).toMatchObject({
    id: lessonEvent.id,
    type: "lesson.completed",
    data: { user_id: learner.id, score: 1 },
  });
  expect(received!.headers).toMatchObject({
    "content-type": "application/json",
    "user-agent": "Lingua-Webhooks/1.0",
    "x-webhook-id": hLessons.id,
    "x-webhook-event": "lesson.completed",
  });
  expect(received!.headers["x-webhook-delivery"]).toMatch(/^dlv_/);
  expect(received!.headers["webhook-id"]).toBe(received!.headers["x-webhook-delivery"]);
  expect(Math.abs(Number(received!.headers["x-webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30);
  expect(received!.headers["webhook-timestamp"]).toBe(received!.headers["x-webhook-timestamp"]);
  expect(received!.x_signature_valid).toEqual([true]);
  expect(received!.standard_valid).toEqual([true]);

  // The event as the events list shows it is the delivered body.
  const listed = await callJson(`/api/integrations/events/${lessonEvent.id}`, { token: admin.token });
  expect(listed.body).toEqual(body);

  // The log: one succeeded delivery with one attempt.
  const log = await deliveries(admin.token, hLessons.id);
  expect(log).toHaveLength(1);
  expect(log[0]).toMatchObject({
    id: received!.headers["x-webhook-delivery"],
    event_id: lessonEvent.id,
    status: "succeeded",
    attempt_count: 1,
    last_response_status: 200,
  });
  expect(log[0].attempts).toEqual([
    expect.objectContaining({ number: 1, response_status: 200, error: null, response_body: "ok" }),
  ]);

  // Nothing went to the disabled webhook or to the other institution, even given time.
  await new Promise((r) => setTimeout(r, 1500));
  expect(await disabled!.received()).toEqual([]);
  expect(await foreign!.received()).toEqual([]);
  expect(await lessons!.received()).toHaveLength(1);
  expect(await deliveries(admin.token, hAll.id, "?event=course.completed")).toHaveLength(1);
});

it("retries a failing delivery with backoff and succeeds, keeping one delivery id across attempts", async () => {
  const { admin, learner } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["lesson.completed"] });
  await receiver.configure({
    secrets: [hook.secret],
    script: [{ status: 500 }, { status: 503, body: "busy" }],
    fallback: { status: 204 },
  });
  await completeALesson(learner);
  const got = await receiver.waitFor(3, 30_000);
  expect(new Set(got.map((r) => r.headers["x-webhook-delivery"])).size).toBe(1);
  expect(got.every((r) => r.x_signature_valid[0] && r.standard_valid[0])).toBe(true);
  // Backoff: each retry waited about the configured second (the test schedule is 1,1,1).
  for (let i = 1; i < got.length; i++)
    expect(got[i]!.received_at - got[i - 1]!.received_at).toBeGreaterThanOrEqual(700);
  const [delivery] = await waitUntil(async () => {
    const log = await deliveries(admin.token, hook.id);
    return log[0]?.status === "succeeded" ? log : null;
  });
  expect(delivery).toMatchObject({
    status: "succeeded",
    attempt_count: 3,
    last_response_status: 204,
    last_error: null,
  });
  expect(delivery.attempts.map((a: any) => [a.number, a.response_status, a.error])).toEqual([
    [1, 500, "HTTP 500"],
    [2, 503, "HTTP 503"],
    [3, 204, null],
  ]);
  expect(delivery.attempts[1].response_body).toBe("busy");
});

it("gives up after exactly 3 retries on 500, on time-out and on a redirect, and marks the delivery failed", async () => {
  const { admin, learner } = await createTenant();
  const [erroring, slow, redirecting, redirectTarget] = Array.from({ length: 4 }, () => receiverEndpoint());
  const big = "x".repeat(5000);
  await erroring!.configure({ fallback: { status: 500, body: big } });
  await slow!.configure({ fallback: { status: 200, delay_ms: 1600 } });
  await redirecting!.configure({ fallback: { status: 302, headers: { Location: redirectTarget!.url } } });
  await redirectTarget!.configure({});
  const hooks = await Promise.all(
    [erroring, slow, redirecting].map((r) =>
      createWebhook(admin, { url: r!.url, events: ["lesson.completed"] }),
    ),
  );
  await completeALesson(learner);

  const finals = await Promise.all(
    hooks.map((hook) =>
      waitUntil(async () => {
        const log = await deliveries(admin.token, hook.id);
        return log[0]?.status === "failed" ? log[0] : null;
      }, 40_000),
    ),
  );
  for (const receiver of [erroring, slow, redirecting]) expect(await receiver!.received()).toHaveLength(4);
  expect(await redirectTarget!.received()).toEqual([]);

  const [e, s, r] = finals;
  expect(e.attempts.map((a: any) => a.number)).toEqual([1, 2, 3, 4]);
  expect(e).toMatchObject({ attempt_count: 4, last_response_status: 500, last_error: "HTTP 500" });
  expect(e.attempts[0].response_body).toHaveLength(1024);
  expect(
    s.attempts.every((a: any) => a.response_status === null && /Timed out after 1000 ms/.test(a.error)),
  ).toBe(true);
  expect(
    r.attempts.every(
      (a: any) => a.response_status === 302 && /Redirect \(302 to .*\) not followed/.test(a.error),
    ),
  ).toBe(true);

  // One failed event is one consecutive failure on the webhook; it stays enabled.
  const hook = await callJson(`/api/integrations/webhooks/${hooks[0]!.id}`, { token: admin.token });
  expect(hook.body).toMatchObject({ enabled: true, consecutive_failures: 1 });
  expect(hook.body.failing_since).toEqual(expect.any(String));
  expect(hook.body.health).toMatchObject({ failed: 1, succeeded: 0, success_rate: 0 });
});
