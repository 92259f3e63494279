import { eq } from "drizzle-orm";
import { type XapiActorFormat, xapiEndpoints } from "../../../db/schema";
import { chunk } from "../../../platform/batch";
import { openFirstAttempts } from "../../../platform/delivery";
import { newId, nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import type { EndpointRow } from "../lrs-client";
import { type BuiltStatement, buildStatements, type Fact, noReferences, storedFact } from "../statements";
import { INSERT_BATCHES_SQL, INSERT_STATEMENTS_SQL, KEYED_TO_BATCHES_SQL, UNSENT_BATCHES_SQL } from "./sql";
import { attemptLongestMs, BATCH_SIZE, type BatchItem, enqueueBatches, xapiTarget } from "./target";

/** Facts per commit: at most 20 batches' statements in one D1 batch. */
export const FACTS_PER_COMMIT = 20 * BATCH_SIZE;

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
 * Offers facts to one endpoint (the back-fill; the outbox subscriber opens an offer and adds its facts
 * group by group, `openOffer`): their statements are built, then stored and grouped into batches of
 * at most 50 in one commit (each statement's id as a key, its log entry and its fact packed in its
 * batch's row; no body is stored).
 * A statement's id is derived from the endpoint and the fact, and an id stored before is skipped
 * (`ON CONFLICT DO NOTHING`): offering a fact twice — a redelivered event, two twin messages at
 * once, a back-fill over forwarded days — never makes a second statement. Untried batches of an
 * earlier offer of the same facts (one that stopped before queueing them) are queued again; the
 * engine's claim makes a second message for a batch harmless.
 *
 * With `sendNow`, a healthy endpoint's new batches are made claimed by their first attempt, which is
 * made right here with the statements in hand (platform/delivery's `openFirstAttempts`, as the
 * webhooks' fan-out does), each commit's while the next is being read, built and committed: only
 * retries, and what the time budget does not reach, go to the queue. Returns how many statements
 * were new.
 */
export async function offerFacts(
  ctx: ServiceContext,
  endpoint: OfferTarget,
  facts: readonly Fact[],
  options: OfferOptions = {},
): Promise<{ statements: number; batches: number }> {
  const offer = await openOffer(ctx, endpoint, options);
  let stopped: { error: unknown } | null = null;
  try {
    await offer.add(facts);
  } catch (error) {
    stopped = { error };
  }
  // Never left running past the offer (a failed commit included): an invocation's I/O is its own.
  const ended = await offer.close().then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  if (stopped) throw stopped.error;
  if ("error" in ended) throw ended.error;
  return ended.result;
}

/** An offer open to more facts: `add` them as they are read, then `close` it once. */
export interface Offer {
  /** Builds, stores and (with `sendNow`) starts sending `facts`, 1,000 per commit; resolves once committed. */
  add(facts: readonly Fact[]): Promise<void>;
  /** Waits for every first attempt and its record, queues what is left; throws a send's error. */
  close(): Promise<{ statements: number; batches: number }>;
}

/**
 * An offer whose facts come in groups (the outbox subscriber reads its events' attempts group by
 * group): each `add` commits its statements and hands the new batches to the offer's one sender, so
 * the first batches are on their way while the next group is read, built and committed. One time
 * budget, one lease, six sends at a time and one recorder for the whole offer.
 */
export async function openOffer(
  ctx: ServiceContext,
  endpoint: OfferTarget,
  options: OfferOptions = {},
): Promise<Offer> {
  const healthy = options.sendNow ? await healthyEndpoint(ctx, endpoint.id) : null;
  const deadline = ctx.now() + Math.min(SEND_NOW_BUDGET_MS, ctx.config.webhooks.timeoutMs);
  // Claimed until the last first attempt the deadline lets start could have ended, and a margin.
  const lease = deadline + attemptLongestMs(ctx) + 30_000;
  const sender = healthy ? openFirstAttempts(ctx, xapiTarget, { deadline, lease }) : null;
  const known = noReferences();
  const target = { id: endpoint.id, actorFormat: endpoint.actorFormat };
  let statements = 0;
  let batches = 0;

  const commitPart = async (part: Fact[]) => {
    const built = await buildStatements(ctx, target, part, known);
    const unique = [...new Map(built.map((b) => [b.id, b])).values()];
    if (unique.length === 0) return;
    const at = ctx.now();
    const sending = sender !== null && at < deadline;
    // Each batch's statements in the order they happened: how its attempts send them.
    const groups = chunk(unique, BATCH_SIZE).map((group) => ({
      id: newId("xbt"),
      group: group.sort(happened),
    }));
    const keys = JSON.stringify(groups.map(({ id, group }) => [id, group.map((s) => s.id)]));
    // The statements' facts travel with their batch: no body is stored, the first attempt sends the
    // statements in hand and a later one builds them again from these. A commit's 1,000 statements
    // make some 250 KB of JSON (an entry is about 190 bytes, an attempt's fact 45), well within the
    // 2 MB D1 binds in one value.
    const batchParams = [
      JSON.stringify(
        groups.map(({ id, group }) => [
          id,
          group.map((s) => storedFact(s.fact)),
          group.map((s) => [s.id, s.verb, s.activityId, s.userId, s.occurredAt]),
        ]),
      ),
      endpoint.id,
      nowIso(at),
      sending ? lease : null,
      unique.length,
    ];
    const [keyed, madeBatches] = await commit(ctx, {
      statements: [
        ctx.d1.prepare(INSERT_STATEMENTS_SQL).bind(keys),
        ctx.d1.prepare(INSERT_BATCHES_SQL).bind(...batchParams),
      ],
    }).then(({ results }) => results);
    const storedCount = keyed?.meta.changes ?? 0;
    statements += storedCount;
    const madeIds = new Set((madeBatches?.results ?? []).map((r) => (r as { id: string }).id));
    const made = groups.filter((g) => madeIds.has(g.id));
    // Every id stored by this commit (a first offer) unless the insert stored fewer: then which ones
    // is read back, each by primary key.
    const storedIds =
      storedCount === unique.length ? new Set(unique.map((s) => s.id)) : await keyedToBatches(ctx, keys);
    // Untried and unclaimed, to be queued: this commit's batches when it did not claim them, and
    // those of an earlier offer of a statement stored before (one that stopped before queueing
    // them) — looked up only when the commit met such a statement, never in a first offer.
    const before = unique.filter((s) => !storedIds.has(s.id)).map((s) => s.id);
    const queued = sending ? [] : made.map((b) => b.id);
    if (before.length > 0) {
      const { results: earlier } = await ctx.d1
        .prepare(UNSENT_BATCHES_SQL)
        .bind(JSON.stringify(before))
        .all<{ id: string }>();
      for (const { id } of earlier) if (!queued.includes(id)) queued.push(id);
    }
    if (sender && healthy && sending) {
      batches += queued.length + made.length;
      sender.add(firstAttempts(healthy, made, storedIds), queued);
      // A turn of the event loop before the next commit, so that these sends reach the network
      // now: back-to-back D1 round trips would otherwise hold them until the last commit (in the
      // burst no answer came back before it did).
      await new Promise((resolve) => setTimeout(resolve, 0));
    } else {
      batches += queued.length;
      if (queued.length > 0) await enqueueBatches(ctx, queued);
    }
  };

  let closed = false;
  return {
    async add(facts) {
      if (closed) throw new Error("offer closed");
      for (const part of chunk([...facts], FACTS_PER_COMMIT)) await commitPart(part);
    },
    async close() {
      closed = true;
      if (sender) await sender.done();
      return { statements, batches };
    },
  };
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

/**
 * Of the statements an offer's commit keyed (INSERT_STATEMENTS_SQL's parameter), the ids keyed to their
 * batch: the statements it stored.
 */
async function keyedToBatches(ctx: ServiceContext, keys: string): Promise<Set<string>> {
  const { results } = await ctx.d1.prepare(KEYED_TO_BATCHES_SQL).bind(keys).all<{ id: string }>();
  return new Set(results.map((r) => r.id));
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
