import { eq } from "drizzle-orm";
import { type XapiActorFormat, xapiEndpoints } from "../../../db/schema";
import { chunk, jsonArrays } from "../../../platform/batch";
import { sendFirstAttempts } from "../../../platform/delivery";
import { newId, nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import type { EndpointRow } from "../lrs-client";
import { type BuiltStatement, buildStatements, type Fact, storedFact } from "../statements";
import { INSERT_BATCH_SQL, INSERT_STATEMENTS_SQL, UNSENT_BATCHES_SQL } from "./sql";
import { attemptLongestMs, BATCH_SIZE, type BatchItem, enqueueBatches, xapiTarget } from "./target";

/** Facts per commit: at most 20 batches' statements in one D1 batch. */
const FACTS_PER_COMMIT = 20 * BATCH_SIZE;

/**
 * An offer that sends stops starting first attempts after one request's time-out (at most 3 s), as
 * the webhooks' fan-out does; what it does not reach goes to the xAPI queue.
 */
const SEND_NOW_BUDGET_MS = 3_000;

/** What an offer needs of its endpoint. */
export interface OfferTarget {
  id: string;
  actorFormat: XapiActorFormat;
}

export interface OfferOptions {
  /**
   * Make the new batches' first attempts here when the endpoint is healthy (the outbox subscriber);
   * without it every batch goes through the xAPI queue (the back-fill).
   */
  sendNow?: boolean;
}

/**
 * Offers facts to one endpoint (the outbox subscriber, and the back-fill): their statements are
 * built, then stored and grouped into batches of at most 50 in one commit (each statement's id as a
 * key, its log entry and its fact packed in its batch's row; no body is stored).
 * A statement's id is derived from the endpoint and the fact, and an id stored before is skipped
 * (`ON CONFLICT DO NOTHING`): offering a fact twice — a redelivered event, two twin messages at
 * once, a back-fill over forwarded days — never makes a second statement. Untried batches of an
 * earlier offer of the same facts (one that stopped before queueing them) are queued again; the
 * engine's claim makes a second message for a batch harmless.
 *
 * With `sendNow`, a healthy endpoint's new batches are made claimed by their first attempt, which is
 * made right here with the statements in hand (platform/delivery's `sendFirstAttempts`, as the
 * webhooks' fan-out does), each commit's while the next is being built: only retries, and what the time
 * budget does not reach, go to the queue. Returns how many statements were new.
 */
export async function offerFacts(
  ctx: ServiceContext,
  endpoint: OfferTarget,
  facts: readonly Fact[],
  options: OfferOptions = {},
): Promise<{ statements: number; batches: number }> {
  const healthy = options.sendNow ? await healthyEndpoint(ctx, endpoint.id) : null;
  const deadline = ctx.now() + Math.min(SEND_NOW_BUDGET_MS, ctx.config.webhooks.timeoutMs);
  let statements = 0;
  let batches = 0;
  // Each commit's first attempts run while the next 1,000 facts are built and committed.
  const sending: Promise<unknown>[] = [];
  let stopped: { error: unknown } | null = null;
  try {
    for (const part of chunk([...facts], FACTS_PER_COMMIT)) {
      const built = await buildStatements(ctx, { id: endpoint.id, actorFormat: endpoint.actorFormat }, part);
      const unique = [...new Map(built.map((b) => [b.id, b])).values()];
      if (unique.length === 0) continue;
      const at = ctx.now();
      const now = nowIso(at);
      // Claimed until the last first attempt the deadline lets start could have ended, and a margin.
      const lease = healthy && at < deadline ? deadline + attemptLongestMs(ctx) + 30_000 : null;
      // Each batch's statements in the order they happened: how its attempts send them.
      const groups = chunk(unique, BATCH_SIZE).map((group) => ({
        id: newId("xbt"),
        group: group.sort(happened),
      }));
      const rows = groups.flatMap(({ id, group }) => group.map((s) => [s.id, id]));
      const insert = ctx.d1.prepare(INSERT_STATEMENTS_SQL);
      const inserts = jsonArrays(rows).map((json) => insert.bind(json));
      // The statements' facts travel with their batch, one JSON text each: no body is stored, the
      // first attempt sends the statements in hand and a later one builds them again from these.
      const insertBatch = ctx.d1.prepare(INSERT_BATCH_SQL);
      const { results } = await commit(ctx, {
        statements: [
          ...inserts,
          ...groups.map(({ id, group }) =>
            insertBatch.bind(
              id,
              endpoint.id,
              now,
              JSON.stringify(group.map((s) => storedFact(s.fact))),
              lease,
              JSON.stringify(group.map((s) => [s.id, s.verb, s.activityId, s.userId, s.occurredAt])),
              JSON.stringify(group.map((s) => s.id)),
            ),
          ),
        ],
      });
      const stored = inserts.flatMap((_, i) => (results[i]?.results ?? []) as { id: string }[]);
      statements += stored.length;
      const made = groups.filter((_, i) => (results[inserts.length + i]?.meta.changes ?? 0) > 0);
      // Untried and unclaimed, to be queued: this commit's batches when it did not claim them, and
      // those of an earlier offer of a statement stored before (one that stopped before queueing
      // them) — looked up only when the commit met such a statement, never in a first offer.
      const storedIds = new Set(stored.map((s) => s.id));
      const before = unique.filter((s) => !storedIds.has(s.id)).map((s) => s.id);
      const queued = lease === null || !healthy ? made.map((b) => b.id) : [];
      if (before.length > 0) {
        const { results: earlier } = await ctx.d1
          .prepare(UNSENT_BATCHES_SQL)
          .bind(JSON.stringify(before))
          .all<{ id: string }>();
        for (const { id } of earlier) if (!queued.includes(id)) queued.push(id);
      }
      if (healthy && lease !== null) {
        batches += queued.length + made.length;
        const items = firstAttempts(healthy, made, storedIds);
        const sent = sendFirstAttempts(ctx, xapiTarget, items, { deadline, lease, queue: queued });
        sent.catch(() => {}); // handled below, once every send has ended
        sending.push(sent);
        // A turn of the event loop before the next commit, so that these sends reach the network
        // now: back-to-back D1 round trips would otherwise hold them until the last commit (in the
        // burst no answer came back before it did).
        await new Promise((resolve) => setTimeout(resolve, 0));
      } else {
        batches += queued.length;
        if (queued.length > 0) await enqueueBatches(ctx, queued);
      }
    }
  } catch (error) {
    stopped = { error };
  }
  // Never left running past the offer (a failed commit included): an invocation's I/O is its own.
  const ended = await Promise.allSettled(sending);
  if (stopped) throw stopped.error;
  const failed = ended.find((e): e is PromiseRejectedResult => e.status === "rejected");
  if (failed) throw failed.reason;
  return { statements, batches };
}

/**
 * The endpoint when its first attempts are worth making at once: enabled and not failing (no failure
 * since its last success). A failing endpoint's batches wait for the queue, where retries and their
 * back-off belong, and never hold up the events consumer.
 */
async function healthyEndpoint(ctx: ServiceContext, id: string): Promise<EndpointRow | null> {
  const row = await ctx.db.select().from(xapiEndpoints).where(eq(xapiEndpoints.id, id)).get();
  return row?.enabled && row.failingSince === null ? row : null;
}

/** The order statements happened in (ties by id): how a batch sends them. */
function happened(a: BuiltStatement, b: BuiltStatement): number {
  if (a.occurredAt !== b.occurredAt) return a.occurredAt < b.occurredAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The batches this offer made, as the engine's items of attempt 1: the statements each stored (one
 * stored before in another batch is not this batch's), in the order they happened, as the queue's
 * consumer reads them; they share their batch's state, all of them in hand.
 */
function firstAttempts(
  endpoint: EndpointRow,
  made: { id: string; group: BuiltStatement[] }[],
  stored: Set<string>,
): BatchItem[] {
  return made.map(({ id, group }) => ({
    id,
    attempt: 1,
    endpoint,
    statements: group.filter((s) => stored.has(s.id)).map((s) => ({ id: s.id, body: s.body })),
    shared: true,
  }));
}
