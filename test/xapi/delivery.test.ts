import { createExecutionContext, env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { attempts, outboxEvents, xapiBatches, xapiEndpoints, xapiStatements } from "../../src/db/schema";
import { offerFacts } from "../../src/domains/xapi/delivery/offer";
import { GONE } from "../../src/domains/xapi/delivery/record";
import { xapiSecretBinding } from "../../src/platform/crypto/sealed-values";
import { seal } from "../../src/platform/crypto/sealing";
import { database } from "../../src/platform/db";
import { advanceClock, clockNow, resetClock } from "../../src/platform/service/clock";
import { runSweeps } from "../../src/scheduled";
import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { receiverEndpoint } from "../helpers/receiver";
import type { ScriptedAnswer } from "../helpers/receiver-server";
import { createTenant } from "../helpers/tenants";
import { createWebhook, runQueue, waitUntil } from "../webhooks/support";
import {
  answeredFacts,
  batchesOf,
  carried,
  createEndpoint,
  dispatched,
  ENCRYPTION_KEY,
  endpointRow,
  heldContext,
  outboxOfUser,
  recordAttempts,
  statementRowsOf,
  statementsOf,
  updateEndpoint,
  XAPI_DLQ,
  XAPI_QUEUE,
} from "./support";

const db = () => database(env.DB);
const basic = (user: string, password: string) => `Basic ${btoa(`${user}:${password}`)}`;

afterEach(() => resetClock());

/**
 * A tenant whose learner has `count` attempts recorded while its institution forwarded nothing, and
 * an endpoint made afterwards (nothing queued for it), with a context whose xAPI queue holds the
 * messages: the test hands the batches to the consumer itself.
 */
async function heldOffer(
  count: number,
  options: { script?: ScriptedAnswer[]; fallback?: ScriptedAnswer } = {},
) {
  const tenant = await createTenant();
  const recorded = await recordAttempts(tenant.learner, count);
  await dispatched(tenant.learner.id);
  const receiver = receiverEndpoint();
  await receiver.configure({ script: options.script ?? [], fallback: options.fallback ?? { status: 200 } });
  const endpointId = await createEndpoint(tenant.institution.id, receiver.url);
  const { ctx, queue } = heldContext();
  const offered = await offerFacts(
    ctx,
    { id: endpointId, actorFormat: "account" },
    await answeredFacts(recorded.attemptIds),
  );
  return { tenant, receiver, endpointId, ctx, queue, offered, attemptIds: recorded.attemptIds };
}

/** Hands the held messages (or `bodies`) to the xAPI consumer. */
function consume(bodies: unknown[], overrides: Partial<Cloudflare.Env> = {}) {
  return runQueue(XAPI_QUEUE, bodies, overrides);
}

describe("forwarding learning activity", () => {
  it("delivers activity recorded through the API to the LRS in batches of at most 50, with the version header and Basic auth", async () => {
    const tenant = await createTenant();
    const receiver = receiverEndpoint();
    const endpointId = await createEndpoint(tenant.institution.id, receiver.url, {
      username: "acme",
      password: "pa:ss word",
    });
    const { attemptIds, summary } = await recordAttempts(tenant.learner, 60);
    // The recording answers as before: the internal event is not among the events it reports.
    expect(summary.events.map((e: { type: string }) => e.type)).not.toContain("attempts.recorded");
    const internal = (await outboxOfUser(tenant.learner.id)).filter((e) => e.type === "attempts.recorded");
    expect(internal).toHaveLength(1);
    expect(internal[0]!.payload).toEqual({ user_id: tenant.learner.id, attempt_ids: attemptIds });
    expect(internal[0]!.institutionId).toBe(tenant.institution.id);

    const sent = await waitUntil(async () => {
      const rows = await statementsOf(endpointId);
      return rows.length >= 60 && rows.every((s) => s.status === "sent") ? rows : null;
    });
    const answered = sent.filter((s) => s.verb === "answered");
    expect(answered).toHaveLength(60);
    // The lesson (and with it the one-lesson course) was completed; achievements were earned.
    expect(sent.filter((s) => s.verb === "completed")).toHaveLength(2);
    expect(sent.some((s) => s.verb === "earned")).toBe(true);
    // Each CEFR level the learner reached is one `mastered` statement.
    const levels = (await outboxOfUser(tenant.learner.id)).filter((e) => e.type === "cefr.level_changed");
    expect(sent.filter((s) => s.verb === "mastered")).toHaveLength(levels.length);
    for (const s of sent) {
      expect(s).toMatchObject({
        status: "sent",
        attempts: 1,
        lastError: null,
        userId: tenant.learner.id,
      });
      expect(s.sentAt).toEqual(expect.any(String));
      expect(s.completedAt).toBe(s.sentAt);
    }

    const requests = await receiver.waitFor(2);
    const ids = requests.flatMap((r) => carried(r.body).map((s) => s.id));
    expect(ids.sort()).toEqual(sent.map((s) => s.id).sort());
    for (const r of requests) {
      expect(r.method).toBe("POST");
      expect(carried(r.body).length).toBeLessThanOrEqual(50);
      expect(r.headers["x-experience-api-version"]).toBe("1.0.3");
      expect(r.headers.authorization).toBe(basic("acme", "pa:ss word"));
      expect(r.headers["content-type"]).toContain("application/json");
    }
    expect((await batchesOf(endpointId)).every((b) => b.status === "succeeded" && b.attemptCount === 1)).toBe(
      true,
    );
    // Accepted at once: each batch's statements share its state, written once for all of them; no
    // statement has a state of its own. The log answers per statement all the same.
    expect(await statementRowsOf(endpointId)).toEqual([]);
    expect(
      (await batchesOf(endpointId)).every(
        (b) => b.logStatus === "sent" && b.logAttempts === 1 && b.completedAt !== null,
      ),
    ).toBe(true);
    const log = await callJson<{
      data: { id: string; status: string; attempts: number; sent_at: string }[];
      meta: { total: number };
    }>(`/api/integrations/xapi-endpoints/${endpointId}/statements?status=sent&verb=answered&per_page=100`, {
      token: tenant.admin.token,
    });
    expect(log.body.meta.total).toBe(60);
    expect(log.body.data.map((s) => s.id).sort()).toEqual(answered.map((s) => s.id).sort());
    expect(log.body.data.every((s) => s.status === "sent" && s.attempts === 1 && s.sent_at)).toBe(true);
    for (const status of ["pending", "failed"])
      expect(
        (
          await callJson<{ meta: { total: number } }>(
            `/api/integrations/xapi-endpoints/${endpointId}/statements?status=${status}`,
            { token: tenant.admin.token },
          )
        ).body.meta.total,
      ).toBe(0);
    const health = await endpointRow(endpointId);
    expect(health).toMatchObject({ lastSuccessAt: expect.any(String), failingSince: null, lastError: null });
  });

  it("forwards only the activities an endpoint wants: progress of a lesson still in progress", async () => {
    const tenant = await createTenant();
    const receiver = receiverEndpoint();
    const endpointId = await createEndpoint(tenant.institution.id, receiver.url, {
      activities: ["progressed"],
    });
    // Two of a lesson's four items: the lesson is in progress.
    const lesson = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 4,
      skills: ["reading"],
    });
    const at = new Date(Date.now() - 60_000).toISOString();
    const res = await callJson("/api/progress/attempts", {
      token: tenant.learner.token,
      body: {
        attempts: lesson.items.slice(0, 2).map((id) => ({
          id: crypto.randomUUID(),
          training_item_id: id,
          score: 1,
          correct: true,
          duration_seconds: 10,
          occurred_at: at,
        })),
      },
    });
    expect(res.res.status).toBe(200);
    const rows = await waitUntil(async () => {
      const found = await statementsOf(endpointId);
      return found.length > 0 && found.every((s) => s.status === "sent") ? found : null;
    });
    await dispatched(tenant.learner.id);
    expect((await statementsOf(endpointId)).map((s) => s.verb)).toEqual(["progressed"]);
    expect(rows).toHaveLength(1);
    expect(await receiver.received()).toHaveLength(1);
  });

  it("writes nothing for an institution without an endpoint, and sends nothing to a disabled one", async () => {
    const without = await createTenant();
    await recordAttempts(without.learner, 3);
    const disabled = await createTenant();
    const receiver = receiverEndpoint();
    const endpointId = await createEndpoint(disabled.institution.id, receiver.url, { enabled: false });
    await recordAttempts(disabled.learner, 3);
    await dispatched(without.learner.id);
    await dispatched(disabled.learner.id);
    const written = await db()
      .select({ id: xapiStatements.id })
      .from(xapiStatements)
      .where(inArray(xapiStatements.userId, [without.learner.id, disabled.learner.id]));
    expect(written).toEqual([]);
    expect(await batchesOf(endpointId)).toEqual([]);
    expect(await receiver.received()).toEqual([]);
  });

  it("keeps the internal event away from webhooks (even `*`) and the events API", async () => {
    const tenant = await createTenant();
    const hookReceiver = receiverEndpoint();
    await createWebhook(tenant.admin, { url: hookReceiver.url, events: ["*"] });
    const { summary } = await recordAttempts(tenant.learner, 2);
    await dispatched(tenant.learner.id);
    const published = summary.events.length;
    expect(published).toBeGreaterThan(0);
    const deliveries = await hookReceiver.waitFor(published);
    await new Promise((r) => setTimeout(r, 300));
    const types = (await hookReceiver.received()).map((r) => r.headers["x-webhook-event"]);
    expect(types).toHaveLength(deliveries.length);
    expect(types).not.toContain("attempts.recorded");

    const listed = await callJson("/api/integrations/events?per_page=100", { token: tenant.admin.token });
    expect(listed.body.data.map((e: { type: string }) => e.type)).not.toContain("attempts.recorded");
    expect(listed.body.data).toHaveLength(published);
    const internal = (await outboxOfUser(tenant.learner.id)).find((e) => e.type === "attempts.recorded");
    expect(
      (await callJson(`/api/integrations/events/${internal!.id}`, { token: tenant.admin.token })).res.status,
    ).toBe(404);
    const filtered = await callJson("/api/integrations/events?type=attempts.recorded", {
      token: tenant.admin.token,
    });
    expect(filtered.res.status).toBe(422);
    const subscribe = await callJson("/api/integrations/webhooks", {
      token: tenant.admin.token,
      body: { url: hookReceiver.url, events: ["attempts.recorded"] },
    });
    expect(subscribe.res.status).toBe(422);
    const catalogue = await callJson("/api/integrations/webhooks/event-types", { token: tenant.admin.token });
    expect(JSON.stringify(catalogue.body)).not.toContain("attempts.recorded");
  });
});

describe("the LRS's answers", () => {
  it("isolates a batch the LRS refuses (400): the bad statement failed with its message, the others sent", async () => {
    const message = '{"message":"statement.result.score.scaled must be between -1 and 1"}';
    const offer = await heldOffer(4, {
      script: [{ status: 400, body: "bad batch" }, { status: 200 }, { status: 400, body: message }],
    });
    const { receiver, endpointId, queue } = offer;
    const result = await consume(queue.messages);
    expect(result.explicitAcks).toHaveLength(1);
    const requests = await receiver.received();
    expect(requests.map((r) => carried(r.body).length)).toEqual([4, 1, 1, 1, 1]);
    const bad = carried(requests[2]!.body)[0]!.id;
    const rows = await statementsOf(endpointId);
    for (const s of rows) {
      expect(s.attempts).toBe(2);
      if (s.id === bad) {
        expect(s).toMatchObject({ status: "failed", lastError: `HTTP 400: ${message}`, sentAt: null });
      } else expect(s).toMatchObject({ status: "sent", lastError: null });
    }
    // Their outcomes differ: each statement holds its own state, the batch's is no longer theirs.
    expect((await statementRowsOf(endpointId)).every((s) => s.status !== null)).toBe(true);
    expect((await batchesOf(endpointId))[0]!.logStatus).toBeNull();
    // The log, its filters and the health answer per statement as ever.
    const { tenant } = offer;
    const page = async (query: string) =>
      (
        await callJson<{
          data: { id: string; status: string; attempts: number; last_error: string | null }[];
        }>(`/api/integrations/xapi-endpoints/${endpointId}/statements${query}`, { token: tenant.admin.token })
      ).body.data;
    expect(await page("?status=failed")).toEqual([
      expect.objectContaining({ id: bad, status: "failed", attempts: 2, last_error: `HTTP 400: ${message}` }),
    ]);
    expect((await page("?status=sent")).map((s) => s.id).sort()).toEqual(
      rows
        .filter((s) => s.id !== bad)
        .map((s) => s.id)
        .sort(),
    );
    const health = await callJson<{ health: Record<string, unknown> }>(
      `/api/integrations/xapi-endpoints/${endpointId}`,
      { token: tenant.admin.token },
    );
    expect(health.body.health).toMatchObject({ sent_24h: 3, failed_24h: 1, pending: 0 });
    // Finished: the batch keeps no facts.
    expect((await batchesOf(endpointId))[0]).toMatchObject({
      status: "succeeded",
      attemptCount: 1,
      facts: null,
      bodies: null,
    });
    // No credential in anything recorded.
    const recorded = JSON.stringify([rows, await batchesOf(endpointId), await endpointRow(endpointId)]);
    expect(recorded).not.toContain("s3cret-pass");
    expect(recorded).not.toContain(btoa("lingua:s3cret-pass"));
    // A statement the LRS refused is the endpoint's last error, not a failure of the endpoint.
    expect(await endpointRow(endpointId)).toMatchObject({
      lastError: `HTTP 400: ${message}`,
      failingSince: null,
      lastSuccessAt: expect.any(String),
    });
  });

  it("counts a 409 (an id the LRS has) as sent, finding out statement by statement which it was", async () => {
    const { receiver, endpointId, queue } = await heldOffer(3, {
      script: [{ status: 409 }, { status: 200 }, { status: 409 }, { status: 200 }],
    });
    await consume(queue.messages);
    expect((await receiver.received()).map((r) => carried(r.body).length)).toEqual([3, 1, 1, 1]);
    expect((await statementsOf(endpointId)).map((s) => s.status)).toEqual(["sent", "sent", "sent"]);
  });

  it("splits a batch the LRS finds too large (413) in halves; a statement too large alone is failed", async () => {
    const { receiver, endpointId, queue } = await heldOffer(5, {
      script: [{ status: 413 }, { status: 413 }, { status: 413 }, { status: 413 }],
    });
    await consume(queue.messages);
    const sizes = (await receiver.received()).map((r) => carried(r.body).length);
    // 5 (413) → 3 (413) → 2 (413) → 1 (413: too large alone, failed) and 1; then the 3's last one,
    // then the 5's other half of 2.
    expect(sizes).toEqual([5, 3, 2, 1, 1, 1, 2]);
    const rows = await statementsOf(endpointId);
    expect(rows.filter((s) => s.status === "failed")).toHaveLength(1);
    expect(rows.find((s) => s.status === "failed")!.lastError).toMatch(/^HTTP 413/);
    expect(rows.filter((s) => s.status === "sent")).toHaveLength(4);
  });

  it("honours Retry-After on 429: the batch waits for it, then goes through", async () => {
    const { receiver, endpointId, queue } = await heldOffer(2, {
      script: [{ status: 429, headers: { "Retry-After": "120" }, body: "" }],
    });
    const first = await consume(queue.messages);
    expect(first.retryMessages).toHaveLength(1);
    expect(first.retryMessages[0]!.delaySeconds).toBe(120);
    const [batch] = await batchesOf(endpointId);
    expect(batch).toMatchObject({ status: "retrying", lastResponseStatus: 429, lastError: "HTTP 429" });
    // Still open: it keeps its statements' facts for the retry (never their bodies).
    expect(JSON.parse(batch!.facts ?? "[]")).toHaveLength(2);
    expect(batch!.bodies).toBeNull();
    expect(batch!.nextAttemptAt! - clockNow()).toBeGreaterThan(115_000);
    expect(
      (await statementsOf(endpointId)).every((s) => s.status === "pending" && s.lastError === "HTTP 429"),
    ).toBe(true);
    // Handed over early, it is not due: no request.
    const early = await consume(queue.messages);
    expect(early.retryMessages).toHaveLength(1);
    expect(await receiver.received()).toHaveLength(1);

    advanceClock(121_000);
    const late = await consume(queue.messages);
    expect(late.explicitAcks).toHaveLength(1);
    expect(await receiver.received()).toHaveLength(2);
    const rows = await statementsOf(endpointId);
    expect(rows.every((s) => s.status === "sent" && s.attempts === 2 && s.lastError === null)).toBe(true);
    // Both attempts came to the same for every statement: written on the batch alone.
    expect(await statementRowsOf(endpointId)).toEqual([]);
    expect((await batchesOf(endpointId))[0]).toMatchObject({
      logStatus: "sent",
      logAttempts: 2,
      logError: null,
    });
  });

  it("retries a 503 with the retry schedule, marks the endpoint failing meanwhile, and uses new credentials at once", async () => {
    const { receiver, endpointId, queue } = await heldOffer(2, { script: [{ status: 503, body: "" }] });
    const first = await consume(queue.messages);
    expect(first.retryMessages).toHaveLength(1);
    const failing = await endpointRow(endpointId);
    expect(failing).toMatchObject({
      lastError: "HTTP 503",
      failingSince: expect.any(String),
      lastSuccessAt: null,
    });

    // The credentials change before the retry: the retry carries the new ones.
    await updateEndpoint(endpointId, {
      username: "rotated",
      secretSealed: await seal("n3w-pass", ENCRYPTION_KEY, xapiSecretBinding(endpointId)),
      credentialsVersion: 2,
    });
    advanceClock(5_000);
    await consume(queue.messages);
    const requests = await receiver.received();
    expect(requests).toHaveLength(2);
    expect(requests[0]!.headers.authorization).toBe(basic("lingua", "s3cret-pass"));
    expect(requests[1]!.headers.authorization).toBe(basic("rotated", "n3w-pass"));
    expect((await statementsOf(endpointId)).every((s) => s.status === "sent")).toBe(true);
    expect(await endpointRow(endpointId)).toMatchObject({
      failingSince: null,
      lastSuccessAt: expect.any(String),
    });
  });

  it("carries an isolation that outlasts the attempt's time on at once, without counting it as an attempt", async () => {
    // The batch is refused (400), then every statement alone answers slowly (within its 1 s
    // time-out): after three time-outs' worth (3 s in tests) the attempt starts no further request.
    const { receiver, endpointId, queue } = await heldOffer(6, {
      script: [{ status: 400, body: "" }],
      fallback: { status: 200, delay_ms: 700 },
    });
    const first = await consume(queue.messages);
    expect(first.retryMessages).toHaveLength(1);
    expect(first.retryMessages[0]!.delaySeconds).toBe(0);
    const settled = (await statementsOf(endpointId)).filter((s) => s.status === "sent");
    expect(settled.length).toBeGreaterThanOrEqual(2);
    expect(settled.length).toBeLessThan(6);
    expect((await batchesOf(endpointId))[0]).toMatchObject({ status: "retrying", attemptCount: 0 });
    // The LRS answers at once now, so that the continuation's outcome does not hang on timing.
    await receiver.configure({ script: [], fallback: { status: 200 }, reset: false });
    await consume(queue.messages);
    const rows = await statementsOf(endpointId);
    expect(rows.every((s) => s.status === "sent")).toBe(true);
    const requests = await receiver.received();
    // The continuation sends only what was left, as one batch.
    expect(carried(requests.at(-1)!.body)).toHaveLength(6 - settled.length);
    expect((await batchesOf(endpointId))[0]).toMatchObject({ status: "succeeded", attemptCount: 1 });
  });

  it("retries time-outs with the schedule, then fails the statements with the last error", async () => {
    const { receiver, endpointId, queue } = await heldOffer(2, {
      fallback: { status: 200, delay_ms: 1_500 },
    });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const run = await consume(queue.messages);
      expect(run.retryMessages).toHaveLength(1);
      advanceClock(5_000);
    }
    const last = await consume(queue.messages);
    expect(last.explicitAcks).toHaveLength(1);
    expect(await receiver.received()).toHaveLength(4);
    const rows = await statementsOf(endpointId);
    for (const s of rows)
      expect(s).toMatchObject({
        status: "failed",
        attempts: 4,
        lastError: "Timed out after 1000 ms",
        sentAt: null,
      });
    expect((await batchesOf(endpointId))[0]).toMatchObject({
      status: "failed",
      attemptCount: 4,
      lastErrorCode: "timeout",
    });
  });
});

describe("switched off, deleted, twice, crashed, lost", () => {
  it("closes the batches of an endpoint disabled after they were queued, sending nothing", async () => {
    const { receiver, endpointId, queue } = await heldOffer(3);
    await updateEndpoint(endpointId, { enabled: false });
    const run = await consume(queue.messages);
    expect(run.explicitAcks).toHaveLength(1);
    expect(await receiver.received()).toEqual([]);
    const rows = await statementsOf(endpointId);
    expect(
      rows.every((s) => s.status === "failed" && s.lastError === "endpoint disabled" && s.attempts === 0),
    ).toBe(true);
    expect((await batchesOf(endpointId))[0]).toMatchObject({ status: "failed", attemptCount: 0 });
  });

  it("drops what was queued for a deleted endpoint", async () => {
    const { receiver, endpointId, queue } = await heldOffer(3);
    await db().delete(xapiEndpoints).where(eq(xapiEndpoints.id, endpointId));
    expect(await statementsOf(endpointId)).toEqual([]);
    const run = await consume(queue.messages);
    expect(run.explicitAcks).toHaveLength(1);
    expect(await receiver.received()).toEqual([]);
  });

  it("sends a batch once when its message comes twice in a batch, twice at once, or again later", async () => {
    const { receiver, endpointId, queue } = await heldOffer(3, { fallback: { status: 200, delay_ms: 200 } });
    const [message] = queue.messages;
    const [twins, concurrent] = await Promise.all([consume([message, message]), consume([message])]);
    expect(twins.explicitAcks.length + twins.retryMessages.length).toBe(2);
    expect(concurrent.explicitAcks.length + concurrent.retryMessages.length).toBe(1);
    const again = await consume([message]);
    expect(again.explicitAcks).toHaveLength(1);
    expect(await receiver.received()).toHaveLength(1);
    expect((await statementsOf(endpointId)).every((s) => s.status === "sent" && s.attempts === 1)).toBe(true);
  });

  it("offering the same facts again makes no statement and no batch", async () => {
    const { ctx, endpointId, attemptIds, queue } = await heldOffer(3);
    const again = await offerFacts(
      ctx,
      { id: endpointId, actorFormat: "account" },
      await answeredFacts(attemptIds),
    );
    expect(again.statements).toBe(0);
    expect(await batchesOf(endpointId)).toHaveLength(1);
    // The untried batch of the first offer is queued again (its message may have been lost): harmless.
    expect(queue.messages).toHaveLength(2);
    expect(new Set(queue.messages.map((m) => JSON.stringify(m))).size).toBe(1);
  });

  it("an offer overlapping an earlier one sends only its new statements, each id once", async () => {
    // Two of three facts were offered before: the later batch keeps all three facts, and sends
    // only the one statement that is pending in it.
    const tenant = await createTenant();
    const recorded = await recordAttempts(tenant.learner, 3);
    await dispatched(tenant.learner.id);
    const receiver = receiverEndpoint();
    await receiver.configure({ script: [], fallback: { status: 200 } });
    const endpointId = await createEndpoint(tenant.institution.id, receiver.url);
    const { ctx, queue } = heldContext();
    const target = { id: endpointId, actorFormat: "account" as const };
    const first = await offerFacts(ctx, target, await answeredFacts(recorded.attemptIds.slice(0, 2)));
    const later = await offerFacts(ctx, target, await answeredFacts(recorded.attemptIds));
    expect([first.statements, later.statements]).toEqual([2, 1]);
    const batches = await batchesOf(endpointId);
    expect(batches.map((b) => (JSON.parse(b.facts ?? "[]") as unknown[]).length).sort()).toEqual([2, 3]);
    await consume(queue.messages);
    const requests = await receiver.received();
    expect(requests.map((r) => carried(r.body).length).sort()).toEqual([1, 2]);
    const ids = requests.flatMap((r) => carried(r.body).map((s) => s.id));
    expect(new Set(ids).size).toBe(3);
    expect((await statementsOf(endpointId)).every((s) => s.status === "sent" && s.attempts === 1)).toBe(true);
    // Finished batches keep no facts.
    expect((await batchesOf(endpointId)).map((b) => b.facts)).toEqual([null, null]);
  });

  it("a batch made before facts were kept is sent from the bodies it stored", async () => {
    const { receiver, endpointId, queue } = await heldOffer(2);
    const [batch] = await batchesOf(endpointId);
    const ids = (JSON.parse(batch!.entries) as [string][]).map(([id]) => id);
    // As the migration left an open batch: its statements' bodies stored, no facts.
    const stored = ids.map((id) => ({
      id,
      verb: { id: "http://adlnet.gov/expapi/verbs/answered" },
      stored: "before",
    }));
    await db()
      .update(xapiBatches)
      .set({ facts: null, bodies: JSON.stringify(stored) })
      .where(eq(xapiBatches.id, batch!.id));
    await consume(queue.messages);
    const requests = await receiver.received();
    expect(requests.map((r) => carried(r.body))).toEqual([stored]);
    expect((await statementsOf(endpointId)).every((s) => s.status === "sent")).toBe(true);
    expect((await batchesOf(endpointId))[0]).toMatchObject({
      status: "succeeded",
      facts: null,
      bodies: null,
    });
  });

  it("a statement whose attempt is gone before it could be built again is failed, not sent", async () => {
    const { receiver, endpointId, queue, attemptIds } = await heldOffer(3);
    await db().delete(attempts).where(eq(attempts.id, attemptIds[1]!));
    await consume(queue.messages);
    const requests = await receiver.received();
    expect(requests).toHaveLength(1);
    expect(carried(requests[0]!.body)).toHaveLength(2);
    const rows = await statementsOf(endpointId);
    expect(rows.filter((s) => s.status === "sent")).toHaveLength(2);
    expect(rows.filter((s) => s.status === "failed")).toEqual([
      expect.objectContaining({ attempts: 0, lastError: GONE }),
    ]);
    expect((await batchesOf(endpointId))[0]).toMatchObject({ status: "succeeded", facts: null });
  });

  it("after a crash mid-batch re-sends only what was in flight, and loses nothing", async () => {
    const { receiver, endpointId, queue } = await heldOffer(60, {
      script: [{ status: 200 }, { status: 200, delay_ms: 800 }],
    });
    expect(queue.messages).toHaveLength(2);
    await expect(consume(queue.messages, { DB: crashingDatabase(env.DB, 400) })).rejects.toThrow(/crashed/);
    const before = await receiver.received();
    expect(before).toHaveLength(2);
    const answeredFirst = carried(before[0]!.body).map((s) => s.id);

    // The queue hands both messages over again once the claims lapsed.
    await db().update(xapiBatches).set({ claimedUntil: 1 }).where(eq(xapiBatches.endpointId, endpointId));
    await consume(queue.messages);
    const ids = (await receiver.received()).flatMap((r) => carried(r.body).map((s) => s.id));
    const times = (id: string) => ids.filter((i) => i === id).length;
    for (const id of answeredFirst) expect(times(id)).toBe(1);
    const rows = await statementsOf(endpointId);
    expect(rows).toHaveLength(60);
    for (const s of rows) {
      expect(s.status).toBe("sent");
      expect(times(s.id)).toBeGreaterThanOrEqual(1);
    }
  });

  it("re-queues a batch whose message was lost, through the minute sweep", async () => {
    const { receiver, endpointId } = await heldOffer(2);
    // The held message is never handed over: the sweep finds the batch a minute after it was due.
    advanceClock(120_000);
    await runSweeps(env, createExecutionContext(), clockNow());
    await receiver.waitFor(1);
    await waitUntil(async () => (await statementsOf(endpointId)).every((s) => s.status === "sent"));
  });

  it("fails the statements of a batch the queue dead-lettered", async () => {
    const { endpointId, queue } = await heldOffer(2);
    const run = await runQueue(XAPI_DLQ, queue.messages);
    expect(run.explicitAcks).toHaveLength(1);
    const rows = await statementsOf(endpointId);
    expect(rows.every((s) => s.status === "failed" && /Dead-lettered/.test(s.lastError ?? ""))).toBe(true);
    expect((await batchesOf(endpointId))[0]!.status).toBe("failed");
  });
});

describe("xapi_endpoint.failing", () => {
  it("is emitted once per failing run, 24 hours after the first failure since a success", async () => {
    const tenant = await createTenant();
    const receiver = receiverEndpoint();
    const endpointId = await createEndpoint(tenant.institution.id, receiver.url);
    const hours = (h: number) => new Date(clockNow() - h * 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    await updateEndpoint(endpointId, {
      failingSince: hours(23),
      lastError: "HTTP 503",
      lastErrorAt: hours(1),
    });
    const events = () =>
      db()
        .select()
        .from(outboxEvents)
        .where(eq(outboxEvents.institutionId, tenant.institution.id))
        .then((rows) => rows.filter((e) => e.type === "xapi_endpoint.failing"));
    await runSweeps(env, createExecutionContext(), clockNow());
    expect(await events()).toEqual([]);

    const since = hours(25);
    await updateEndpoint(endpointId, { failingSince: since });
    await Promise.all([
      runSweeps(env, createExecutionContext(), clockNow()),
      runSweeps(env, createExecutionContext(), clockNow()),
    ]);
    await runSweeps(env, createExecutionContext(), clockNow() + 60_000);
    const [event, ...more] = await events();
    expect(more).toEqual([]);
    expect(event!.payload).toEqual({
      endpoint_id: endpointId,
      name: `LRS ${endpointId}`,
      failing_since: since,
      last_error: "HTTP 503",
    });
    const listed = await callJson(`/api/integrations/events?type=xapi_endpoint.failing`, {
      token: tenant.admin.token,
    });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([event!.id]);
    expect(JSON.stringify(event!.payload)).not.toContain("s3cret");

    // A success ends the run; the next run that lasts 24 hours is reported again.
    await updateEndpoint(endpointId, { failingSince: null, lastSuccessAt: hours(0) });
    await runSweeps(env, createExecutionContext(), clockNow());
    expect(await events()).toHaveLength(1);
    advanceClock(25 * 3_600_000);
    await updateEndpoint(endpointId, { failingSince: hours(24.5) });
    await runSweeps(env, createExecutionContext(), clockNow());
    expect(await events()).toHaveLength(2);
  });
});

/**
 * A D1 binding that stops answering `afterMs` after its first batch (the consumer's claim) returned:
 * from then on every statement fails, as if the invocation had crashed at that moment.
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
