import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { expect, it } from "vitest";
import { outboxDispatcher } from "../../src/platform/outbox-dispatch";

function batchOf(bodies: unknown[]) {
  return createMessageBatch(
    "lingua-events",
    bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
  );
}

it("hands every event to each subscriber once per batch and acknowledges the batch", async () => {
  const seen: Record<string, string[][]> = { a: [], b: [] };
  const dispatch = outboxDispatcher([
    { name: "a", deliver: async (_env, ids) => void seen.a!.push(ids) },
    { name: "b", deliver: async (_env, ids) => void seen.b!.push(ids) },
  ]);
  const batch = batchOf([{ event_id: "evt_1" }, { event_id: "evt_2" }, { event_id: "evt_1" }, { nope: 1 }]);
  const ctx = createExecutionContext();
  await dispatch(batch, env);
  expect(seen).toEqual({ a: [["evt_1", "evt_2"]], b: [["evt_1", "evt_2"]] });
  const result = await getQueueResult(batch, ctx);
  // The three that fit are acknowledged; the one that does not was dead-lettered (and acknowledged).
  expect(result.explicitAcks.sort()).toEqual(["m0", "m1", "m2", "m3"]);
  expect(result.retryMessages).toEqual([]);
});

it("retries the whole batch when a subscriber fails, after the others have had it", async () => {
  const delivered: string[] = [];
  const dispatch = outboxDispatcher([
    { name: "fails", deliver: async () => Promise.reject(new Error("D1 hiccup")) },
    { name: "works", deliver: async (_env, ids) => void delivered.push(...ids) },
  ]);
  const batch = batchOf([{ event_id: "evt_9" }]);
  const ctx = createExecutionContext();
  await dispatch(batch, env);
  expect(delivered).toEqual(["evt_9"]);
  const result = await getQueueResult(batch, ctx);
  expect(result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual(["m0"]);
  expect(result.explicitAcks).toEqual([]);
});

it("flattens the ids of packed and single-event messages into one de-duplicated set, in order", async () => {
  const seen: string[][] = [];
  const dispatch = outboxDispatcher([{ name: "a", deliver: async (_env, ids) => void seen.push(ids) }]);
  const batch = batchOf([
    { event_ids: ["evt_1", "evt_2", "evt_3"] },
    { event_id: "evt_2" },
    { event_ids: ["evt_3", "evt_4"] },
  ]);
  const ctx = createExecutionContext();
  await dispatch(batch, env);
  expect(seen).toEqual([["evt_1", "evt_2", "evt_3", "evt_4"]]);
  const result = await getQueueResult(batch, ctx);
  expect(result.explicitAcks.sort()).toEqual(["m0", "m1", "m2"]);
});

it("retries every message of a batch of packed messages when a subscriber fails", async () => {
  const dispatch = outboxDispatcher([
    { name: "fails", deliver: async () => Promise.reject(new Error("D1 hiccup")) },
  ]);
  const batch = batchOf([{ event_ids: ["evt_1", "evt_2"] }, { event_ids: ["evt_3"] }, { event_id: "evt_4" }]);
  const ctx = createExecutionContext();
  await dispatch(batch, env);
  const result = await getQueueResult(batch, ctx);
  expect(result.retryMessages.map((m: { msgId: string }) => m.msgId).sort()).toEqual(["m0", "m1", "m2"]);
  expect(result.explicitAcks).toEqual([]);
});
