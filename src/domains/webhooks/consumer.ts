import { and, eq, inArray, isNull } from "drizzle-orm";
import { type DeliveryStatus, outboxEvents, webhookDeliveries } from "../../db/schema";
import type { Env } from "../../env";
import type { Statement } from "../../platform/batch";
import { config as settingsOf } from "../../platform/config";
import { database, inJsonList } from "../../platform/db";
import type { EventMessage } from "../../platform/events";
import { newId, nowIso } from "../../platform/ids";
import { queueDelaySeconds, sendAll } from "../../platform/queue";
import { type AttemptResult, attemptDelivery, attemptStatements, type ClaimedDelivery } from "./attempt";
import { PARALLEL_SENDS } from "./config";

export interface DeliveryMessage {
  delivery_id: string;
}

/** Queues may hand a message over a little before its delay is up. */
const EARLY_SLACK_MS = 2_000;

/** Sends one message per delivery; `delaySeconds[i]`, when given, delays the i-th. */
export async function enqueueDeliveries(
  env: Env,
  deliveryIds: readonly string[],
  delaySeconds?: readonly number[],
): Promise<void> {
  await sendAll(
    env.WEBHOOK_QUEUE,
    deliveryIds.map((id): DeliveryMessage => ({ delivery_id: id })),
    delaySeconds,
  );
}

function messagesById<T>(
  batch: MessageBatch<unknown>,
  key: (body: T) => string | undefined,
): Map<string, Message<unknown>[]> {
  const byId = new Map<string, Message<unknown>[]>();
  for (const message of batch.messages) {
    const id = typeof message.body === "object" && message.body ? key(message.body as T) : undefined;
    if (typeof id !== "string") {
      console.error(
        JSON.stringify({
          level: "error",
          message: "malformed queue message dropped",
          queue: batch.queue,
          id: message.id,
        }),
      );
      message.ack();
      continue;
    }
    byId.set(id, [...(byId.get(id) ?? []), message]);
  }
  return byId;
}

/**
 * Fan-out: each outbox event becomes one delivery per enabled webhook of its institution that
 * subscribes to its type. The unique (event, webhook) index makes a repeated fan-out a no-op; the
 * event is marked only after its delivery messages are sent, so a crash in between repeats the
 * sends (harmless: a delivery is claimed before it is sent) rather than losing them.
 *
 * A healthy webhook's first attempt is made right here: its delivery row is inserted already claimed
 * (the insert counts attempt 1, exactly as the delivery consumer's claim would), sent, and logged; only
 * what fails goes to the delivery queue, as a delayed retry. A webhook that is failing, and whatever
 * the time or subrequest budget of this invocation does not reach, goes through the delivery queue.
 */
export async function fanOutEvents(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byId = messagesById<EventMessage>(batch, (b) => b.event_id);
  if (byId.size > 0) await fanOut(env, [...byId.keys()]);
  batch.ackAll();
}

/**
 * The fan-out stops starting first attempts after one attempt's time-out (at most 3 s), so slow
 * receivers hold back the others by about that much; the rest go to the delivery queue.
 */
const DIRECT_SEND_BUDGET_MS = 3_000;
/** Workers allow 10,000 subrequests per invocation (Paid); D1 and Queues calls count too. */
const DIRECT_SENDS_PER_INVOCATION = 1_000;

const EVENTS_SQL = `SELECT id, type, institution_id, fanned_out_at, created_at, payload FROM outbox_events
  WHERE id IN (SELECT value FROM json_each(?1))`;
const HOOKS_SQL = `SELECT id, institution_id, events, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at,
    consecutive_failures
  FROM webhooks WHERE institution_id IN (SELECT value FROM json_each(?1)) AND enabled = 1`;
// One statement for any number of rows: the rows travel as one JSON parameter, not 7 each. A row
// marked for a direct send is inserted claimed, its first attempt counted.
const INSERT_SQL = `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, status, attempt_count, claimed_until, next_attempt_at, created_at)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, 'pending', value ->> 4, CASE WHEN value ->> 4 = 1 THEN ?2 END, ?3, ?4
  FROM json_each(?1) WHERE true
  ON CONFLICT DO NOTHING RETURNING id`;
interface HookRow {
  id: string;
  institution_id: string;
  events: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  consecutive_failures: number;
}

/** What signing and sending need of a webhook, from its row as the fan-out and the claim read it. */
function webhookToSign(
  id: string,
  row: Pick<
    HookRow,
    "url" | "secret_sealed" | "previous_secret_sealed" | "previous_secret_expires_at" | "consecutive_failures"
  >,
): ClaimedDelivery["webhook"] {
  return {
    id,
    url: row.url,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    consecutiveFailures: row.consecutive_failures,
  };
}

export async function fanOut(env: Env, eventIds: string[]): Promise<void> {
  const d1 = env.DB;
  const db = database(d1);
  const events = (
    await d1.prepare(EVENTS_SQL).bind(JSON.stringify(eventIds)).all<{
      id: string;
      type: string;
      institution_id: string | null;
      fanned_out_at: string | null;
      created_at: string;
      payload: string;
    }>()
  ).results;
  const open = events.filter((e) => e.fanned_out_at === null && e.type !== "ping");
  const institutions = [
    ...new Set(open.map((e) => e.institution_id).filter((id): id is string => id !== null)),
  ];
  const hooks = institutions.length
    ? (await d1.prepare(HOOKS_SQL).bind(JSON.stringify(institutions)).all<HookRow>()).results
    : [];
  const config = settingsOf(env).webhooks;
  const now = Date.now();
  const budgetMs = Math.min(DIRECT_SEND_BUDGET_MS, config.timeoutMs);
  const lease = now + budgetMs + config.timeoutMs + 30_000;

  const subscribed = hooks.map((h) => {
    const types = JSON.parse(h.events) as string[];
    return {
      row: h,
      types: types.includes("*") ? null : new Set(types),
      webhook: webhookToSign(h.id, h),
    };
  });
  const rows: [string, string, string, string, 0 | 1][] = [];
  const direct = new Map<string, ClaimedDelivery>();
  for (const event of open) {
    let claimedEvent: ClaimedDelivery["event"] | undefined;
    for (const hook of subscribed) {
      if (hook.row.institution_id !== event.institution_id || (hook.types && !hook.types.has(event.type)))
        continue;
      const id = newId("dlv");
      // Only a webhook that answers well is worth sending to before the fan-out finishes.
      const sendNow = hook.row.consecutive_failures === 0 && direct.size < DIRECT_SENDS_PER_INVOCATION;
      rows.push([id, hook.row.id, event.id, event.type, sendNow ? 1 : 0]);
      if (sendNow) {
        claimedEvent ??= {
          id: event.id,
          type: event.type,
          createdAt: event.created_at,
          payload: JSON.parse(event.payload) as Record<string, unknown>,
        };
        direct.set(id, { id, attempt: 1, webhook: hook.webhook, event: claimedEvent, isPing: false });
      }
    }
  }

  if (rows.length > 0) {
    const inserted = (
      await d1.prepare(INSERT_SQL).bind(JSON.stringify(rows), lease, now, nowIso(now)).all<{ id: string }>()
    ).results;
    let toQueue: string[] = [];
    const toSend: ClaimedDelivery[] = [];
    for (const { id } of inserted) {
      const claimed = direct.get(id);
      if (claimed) toSend.push(claimed);
      else toQueue.push(id);
    }
    if (inserted.length < rows.length) {
      // An earlier run inserted some (then stopped before marking the event): queue what won the
      // unique index, whichever run wrote it, as long as nobody has tried or claimed it yet.
      const existing = await db
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(
          and(
            inJsonList(
              webhookDeliveries.eventId,
              open.map((e) => e.id),
            ),
            isNull(webhookDeliveries.redeliveryOf),
            eq(webhookDeliveries.status, "pending"),
            eq(webhookDeliveries.attemptCount, 0),
          ),
        );
      // This run's unclaimed rows are among them (pending, never tried).
      toQueue = existing.map((d) => d.id);
    }

    // First attempts, six at a time, until the budget is spent.
    const deadline = now + budgetMs;
    const results = await inPool(toSend, PARALLEL_SENDS, (d) =>
      Date.now() < deadline ? attemptDelivery(env, config, d) : Promise.resolve(null),
    );
    const attempts: { delivery: ClaimedDelivery; result: AttemptResult }[] = [];
    const retries: { id: string; delay: number }[] = [];
    const released: string[] = [];
    toSend.forEach((delivery, i) => {
      const result = results[i];
      if (!result) {
        released.push(delivery.id);
        return;
      }
      attempts.push({ delivery, result });
      if (result.status === "retrying")
        retries.push({ id: delivery.id, delay: queueDelaySeconds(result.retryInSeconds!) });
    });
    const statements: Statement[] = attemptStatements(db, config, attempts, Date.now());
    if (released.length > 0) {
      statements.push(
        db
          .update(webhookDeliveries)
          .set({ attemptCount: 0, claimedUntil: null })
          .where(
            and(
              inJsonList(webhookDeliveries.id, released),
              eq(webhookDeliveries.status, "pending"),
              eq(webhookDeliveries.attemptCount, 1),
              eq(webhookDeliveries.claimedUntil, lease),
            ),
          ),
      );
    }
    // The log is written before anything is queued or the event marked: if this write fails the
    // event is fanned out again and finds its deliveries claimed, so none is sent again while the
    // claims hold (as in the delivery consumer; after that the sweep hands them to the queue).
    if (statements.length > 0) await db.batch(statements as [Statement, ...Statement[]]);
    const queued = [...toQueue, ...released];
    await enqueueDeliveries(
      env,
      [...queued, ...retries.map((r) => r.id)],
      [...queued.map(() => 0), ...retries.map((r) => r.delay)],
    );
  }
  if (open.length > 0) {
    await db
      .update(outboxEvents)
      .set({ fannedOutAt: nowIso(now) })
      .where(
        and(
          inJsonList(
            outboxEvents.id,
            open.map((e) => e.id),
          ),
          isNull(outboxEvents.fannedOutAt),
        ),
      );
  }
}

/** Events that still fail after the queue's retries: logged; the sweep sends them again later. */
export async function deadLetterEvents(batch: MessageBatch<unknown>): Promise<void> {
  const sample = batch.messages.slice(0, 5).map((m) => (m.body as EventMessage | null)?.event_id);
  console.error(
    JSON.stringify({
      level: "error",
      message: "event fan-out dead-lettered",
      count: batch.messages.length,
      sample,
    }),
  );
  batch.ackAll();
}

async function inPool<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

interface DeliveryDetails {
  id: string;
  status: DeliveryStatus;
  claimed_until: number | null;
  next_attempt_at: number | null;
  webhook_id: string;
  url: string;
  enabled: number;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  consecutive_failures: number;
  event_id: string;
  event_type: string;
  event_created_at: string;
  payload: string;
}

// The hot path of every delivery, in plain SQL on the D1 binding: the ORM's row mapping was a tenth of
// the consumer's CPU time. Ids travel as one JSON parameter (D1 binds at most 100 per statement).
const CLAIM_SQL = `UPDATE webhook_deliveries SET claimed_until = ?1, attempt_count = attempt_count + 1
  WHERE id IN (SELECT value FROM json_each(?2)) AND status IN ('pending', 'retrying')
    AND (claimed_until IS NULL OR claimed_until < ?3) AND (next_attempt_at IS NULL OR next_attempt_at <= ?4)
  RETURNING id, attempt_count AS attempt`;
const DETAILS_SQL = `SELECT d.id, d.status, d.claimed_until, d.next_attempt_at, w.id AS webhook_id, w.url, w.enabled, w.secret_sealed,
    w.previous_secret_sealed, w.previous_secret_expires_at, w.consecutive_failures, e.id AS event_id, e.type AS event_type,
    e.created_at AS event_created_at, e.payload
  FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN outbox_events e ON e.id = d.event_id
  WHERE d.id IN (SELECT value FROM json_each(?1))`;

/**
 * Claims the deliveries of a batch and reads what sending them needs, in one round trip: an attempt
 * is made only on a delivery that is still open, due, and not claimed by a twin message; the claim
 * counts the attempt.
 */
async function claim(d1: D1Database, ids: string[], now: number, leaseMs: number) {
  const list = JSON.stringify(ids);
  const [claimed, details] = await d1.batch<unknown>([
    d1.prepare(CLAIM_SQL).bind(now + leaseMs, list, now, now + EARLY_SLACK_MS),
    d1.prepare(DETAILS_SQL).bind(list),
  ]);
  return {
    claimed: new Map((claimed!.results as { id: string; attempt: number }[]).map((c) => [c.id, c.attempt])),
    rows: new Map((details!.results as DeliveryDetails[]).map((r) => [r.id, r])),
  };
}

/**
 * Delivery: sends each claimed delivery once, records the attempt, and acknowledges or schedules the
 * retry with the queue's own delay. A message for a delivery that already ended is acknowledged
 * without sending, so at-least-once delivery of messages never means a second POST.
 */
export async function deliverWebhooks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byId = messagesById<DeliveryMessage>(batch, (b) => b.delivery_id);
  if (byId.size === 0) return;
  const db = database(env.DB);
  const config = settingsOf(env).webhooks;
  const now = Date.now();
  const ids = [...byId.keys()];
  const leaseMs = (Math.ceil(ids.length / PARALLEL_SENDS) + 1) * config.timeoutMs + 30_000;
  const { claimed, rows } = await claim(env.DB, ids, now, leaseMs);

  const settle = (id: string, how: { retryInSeconds?: number }) => {
    for (const message of byId.get(id)!) {
      if (how.retryInSeconds === undefined) message.ack();
      else message.retry({ delaySeconds: queueDelaySeconds(how.retryInSeconds) });
    }
  };

  const toSend: ClaimedDelivery[] = [];
  const statements: Statement[] = [];
  for (const id of ids) {
    const row = rows.get(id);
    const attempt = claimed.get(id);
    if (!row) {
      settle(id, {}); // the webhook (and with it the delivery) was deleted
    } else if (attempt === undefined) {
      if (row.status === "succeeded" || row.status === "failed") settle(id, {});
      else if (row.claimed_until && row.claimed_until >= now)
        settle(id, { retryInSeconds: (row.claimed_until - now) / 1000 + 1 });
      else settle(id, { retryInSeconds: ((row.next_attempt_at ?? now) - now) / 1000 });
    } else if (!row.enabled) {
      statements.push(
        db
          .update(webhookDeliveries)
          .set({
            status: "failed",
            claimedUntil: null,
            lastError: "Webhook disabled; not sent",
            completedAt: nowIso(now),
            attemptCount: attempt - 1,
          })
          .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.attemptCount, attempt))),
      );
      settle(id, {});
    } else {
      toSend.push({
        id,
        attempt,
        webhook: webhookToSign(row.webhook_id, row),
        event: {
          id: row.event_id,
          type: row.event_type,
          createdAt: row.event_created_at,
          payload: JSON.parse(row.payload) as Record<string, unknown>,
        },
        isPing: row.event_type === "ping",
      });
    }
  }

  const results: AttemptResult[] = await inPool(toSend, PARALLEL_SENDS, (d) =>
    attemptDelivery(env, config, d),
  );
  const finished = Date.now();
  statements.push(
    ...attemptStatements(
      db,
      config,
      toSend.map((delivery, i) => ({ delivery, result: results[i]! })),
      finished,
    ),
  );
  // The log is written before any message is acknowledged: if this write fails the batch is
  // retried, and the claims (not yet released) keep a twin from sending again before they expire.
  if (statements.length > 0) await db.batch(statements as [Statement, ...Statement[]]);
  toSend.forEach((delivery, i) => {
    const result = results[i]!;
    settle(delivery.id, result.status === "retrying" ? { retryInSeconds: result.retryInSeconds! } : {});
  });
}

/** Deliveries whose messages exhausted the queue's own retries: closed as failed, visibly. */
export async function deadLetterDeliveries(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byId = messagesById<DeliveryMessage>(batch, (b) => b.delivery_id);
  if (byId.size > 0) {
    await database(env.DB)
      .update(webhookDeliveries)
      .set({
        status: "failed",
        claimedUntil: null,
        lastError: "Dead-lettered: the delivery queue gave up on this message",
        completedAt: nowIso(),
      })
      .where(
        and(
          inJsonList(webhookDeliveries.id, [...byId.keys()]),
          inArray(webhookDeliveries.status, ["pending", "retrying"]),
        ),
      );
  }
  batch.ackAll();
}
