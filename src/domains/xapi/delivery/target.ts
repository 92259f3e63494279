import { inArray } from "drizzle-orm";
import { z } from "zod";
import { type attempts, xapiBatches, xapiEndpoints } from "../../../db/schema";
import { inJsonList } from "../../../platform/db";
import {
  type Closed,
  type DeliveryTarget,
  enqueue,
  PARALLEL_SENDS,
  type WorkState,
} from "../../../platform/delivery";
import { nextRetrySeconds } from "../../../platform/outbound";
import type { ServiceContext } from "../../../platform/service/context";
import { type EndpointRow, lrsRequest } from "../lrs-client";
import { buildStatements, type Fact, restoreFact, type StoredFact } from "../statements";
import { exchange, type PendingStatement } from "./exchange";
import { attemptsOfBatchFactsQuery, pendingOfOwnStateBatchesQuery } from "./queries";
import { type BatchItem, type BatchResult, closeDisabled, recordAttempts } from "./record";

export type { BatchItem, BatchResult } from "./record";

/**
 * xAPI statements as a target of the delivery engine (platform/delivery): a batch of up to 50
 * statements of one endpoint, read with its endpoint (credentials and version as they are at the
 * time of the attempt), POSTed to the LRS and, as its answers demand, isolated or split
 * (exchange.ts), recorded on each statement, the batch and the endpoint's health.
 */

/** A message of the xAPI queue: one batch to attempt. */
export const XapiBatchMessage = z.object({ batch_id: z.string().min(1) });
export type XapiBatchMessage = z.infer<typeof XapiBatchMessage>;

/** Statements per batch: one POST carries at most this many. */
export const BATCH_SIZE = 50;

/** An attempt starts no further request after this many time-outs (it isolates or splits meanwhile). */
const BUDGET_TIMEOUTS = 3;

/** How long an attempt keeps starting requests: its whole duration is at most this and one time-out. */
function budgetMs(ctx: ServiceContext): number {
  return BUDGET_TIMEOUTS * ctx.config.webhooks.timeoutMs;
}

/** The longest one attempt of a batch can take: its budget and the time-out of its last request. */
export function attemptLongestMs(ctx: ServiceContext): number {
  return budgetMs(ctx) + ctx.config.webhooks.timeoutMs;
}

/** One attempt of a batch: its pending statements through `lrsRequest`, judged into the batch's verdict. */
export async function attemptBatch(
  ctx: ServiceContext,
  item: BatchItem,
  random: () => number = Math.random,
): Promise<BatchResult> {
  const ex = await exchange(
    item.statements,
    (body) => lrsRequest(ctx, item.endpoint, { method: "POST", path: "statements", body }),
    ctx.now() + budgetMs(ctx),
    () => ctx.now(),
  );
  const left = item.statements.filter((s) => !ex.settled.has(s.id)).length;
  if (left === 0) return { status: "succeeded", exchange: ex, continuation: false, error: null };
  if (ex.stop || ex.settled.size === 0) {
    // An answer stopped the attempt (or, which the budget should never allow, it ran out of time
    // having settled nothing): the retry schedule decides.
    const error = ex.stop?.error ?? "Ran out of time before the LRS settled any statement";
    const delay = nextRetrySeconds(
      item.attempt,
      ctx.config.webhooks.retrySchedule,
      ex.stop?.result.headers?.get("Retry-After") ?? null,
      ctx.now(),
      random,
    );
    return delay === null
      ? { status: "failed", exchange: ex, continuation: false, error }
      : { status: "retrying", retryInSeconds: delay, exchange: ex, continuation: false, error };
  }
  // Out of time with statements left after settling some: carry on at once, uncounted.
  return { status: "retrying", retryInSeconds: 0, exchange: ex, continuation: true, error: null };
}

/** A batch's stored bodies (the JSON array of its statements as built) by statement id, each as JSON text. */
function storedBodies(json: string, into: Map<string, string>): void {
  for (const statement of JSON.parse(json) as { id: string }[])
    into.set(statement.id, JSON.stringify(statement));
}

/**
 * The statements of claimed batches that keep facts, built again for this attempt (bodies by
 * statement id): from the same facts, so to the same ids, with what they refer to as it is now (a
 * learner renamed since is sent by the new name) and the endpoint's actor format as it is now. A
 * fact whose attempt, item, lesson, course or learner is gone builds nothing.
 */
async function rebuiltBodies(
  ctx: ServiceContext,
  batches: readonly { endpoint: EndpointRow; facts: string }[],
  attemptRows: readonly (typeof attempts.$inferSelect)[],
): Promise<Map<string, string>> {
  const attemptsById = new Map(attemptRows.map((a) => [a.id, a]));
  const byEndpoint = new Map<string, { endpoint: EndpointRow; facts: Fact[] }>();
  for (const { endpoint, facts } of batches) {
    const entry = byEndpoint.get(endpoint.id) ?? { endpoint, facts: [] };
    byEndpoint.set(endpoint.id, entry);
    for (const stored of JSON.parse(facts) as StoredFact[]) {
      const fact = restoreFact(stored, attemptsById);
      if (fact) entry.facts.push(fact);
    }
  }
  const bodies = new Map<string, string>();
  for (const { endpoint, facts } of byEndpoint.values())
    for (const built of await buildStatements(ctx, endpoint, facts)) bodies.set(built.id, built.body);
  return bodies;
}

export const xapiTarget: DeliveryTarget<XapiBatchMessage, WorkState, BatchItem, BatchResult> = {
  name: "xapi",
  table: "xapi_batches",
  message: {
    schema: XapiBatchMessage,
    idOf: (body) => body.batch_id,
    of: (id) => ({ batch_id: id }),
  },
  queue: (env) => env.XAPI_QUEUE,
  deadLetter: (env) => env.XAPI_DLQ,
  deadLetteredError: "Dead-lettered: the xAPI queue gave up on this batch",
  leaseMs: (ctx, count) => (Math.ceil(count / PARALLEL_SENDS) + 1) * attemptLongestMs(ctx) + 30_000,
  // The claimed batches with their endpoints (credentials as they are now: a change applies to the
  // very next attempt), their facts (or, made before facts were kept, bodies), the attempts those
  // facts name and the ids of their pending statements: one round trip. An attempt sends the pending
  // statements only, built again from their facts, in the order they happened.
  async prepare(ctx, claimed, now) {
    const ids = claimed.map((c) => c.row.id);
    // Separate reads rather than a join: D1's batch answers rows as objects, where the tables' `id`
    // columns would collide.
    const [batches, endpointRows, own, attemptRows] = await ctx.db.batch([
      ctx.db
        .select({
          id: xapiBatches.id,
          endpointId: xapiBatches.endpointId,
          facts: xapiBatches.facts,
          bodies: xapiBatches.bodies,
          entries: xapiBatches.entries,
          logStatus: xapiBatches.logStatus,
        })
        .from(xapiBatches)
        .where(inJsonList(xapiBatches.id, ids)),
      ctx.db
        .select()
        .from(xapiEndpoints)
        .where(
          inArray(
            xapiEndpoints.id,
            ctx.db
              .select({ id: xapiBatches.endpointId })
              .from(xapiBatches)
              .where(inJsonList(xapiBatches.id, ids)),
          ),
        ),
      pendingOfOwnStateBatchesQuery(ctx.db, ids),
      attemptsOfBatchFactsQuery(ctx.db, ids),
    ]);
    const byId = new Map(endpointRows.map((e) => [e.id, e]));
    const endpoints = new Map(batches.map((b) => [b.id, byId.get(b.endpointId)]));
    // Pending: all the statements of a batch whose statements share its pending state (in the order
    // they happened, as stored), the pending rows of one whose statements hold their own.
    const pendingIds = new Map<string, string[]>();
    const shared = new Set<string>();
    for (const b of batches)
      if (b.logStatus === "pending") {
        pendingIds.set(
          b.id,
          (JSON.parse(b.entries) as [string][]).map(([id]) => id),
        );
        shared.add(b.id);
      }
    for (const s of own) {
      if (!s.batchId) continue;
      const list = pendingIds.get(s.batchId);
      if (list) list.push(s.id);
      else pendingIds.set(s.batchId, [s.id]);
    }
    // The bodies to send: built again from the facts of the batches to be sent, or as stored.
    const bodies = new Map<string, string>();
    const toBuild: { endpoint: EndpointRow; facts: string }[] = [];
    for (const b of batches) {
      const endpoint = endpoints.get(b.id);
      if (!endpoint?.enabled || !pendingIds.has(b.id)) continue;
      if (b.facts !== null) toBuild.push({ endpoint, facts: b.facts });
      else if (b.bodies !== null) storedBodies(b.bodies, bodies);
    }
    if (toBuild.length > 0)
      for (const [id, body] of await rebuiltBodies(ctx, toBuild, attemptRows)) bodies.set(id, body);
    const statements = new Map<string, { send: PendingStatement[]; gone: string[] }>();
    for (const b of batches) {
      const send: PendingStatement[] = [];
      const gone: string[] = [];
      for (const id of pendingIds.get(b.id) ?? []) {
        const body = bodies.get(id);
        if (body !== undefined) send.push({ id, body });
        else gone.push(id);
      }
      statements.set(b.id, { send, gone });
    }
    const send: BatchItem[] = [];
    const close: Closed[] = [];
    for (const { row, attempt } of claimed) {
      const endpoint = endpoints.get(row.id);
      const work = statements.get(row.id) ?? { send: [], gone: [] };
      // Deleted meanwhile: the cascade took the batch and its statements; nothing to write.
      if (!endpoint) close.push({ id: row.id, statements: [] });
      else if (!endpoint.enabled) close.push(closeDisabled(ctx, row.id, attempt, now));
      else
        send.push({
          id: row.id,
          attempt,
          endpoint,
          statements: work.send,
          gone: work.gone,
          // Every statement in hand, or the attempt is recorded statement by statement.
          shared: shared.has(row.id) && work.gone.length === 0,
        });
    }
    return { send, close };
  },
  send: (ctx, item) => attemptBatch(ctx, item),
  record: recordAttempts,
};

/** One xAPI-queue message per batch; `delaySeconds[i]`, when given, delays the i-th. */
export function enqueueBatches(
  ctx: ServiceContext,
  ids: readonly string[],
  delaySeconds?: readonly number[],
): Promise<void> {
  return enqueue(ctx, xapiTarget, ids, delaySeconds);
}
