import { and, eq, inArray } from "drizzle-orm";
import { type DeliveryStatus, webhookDeliveries } from "../../db/schema";
import type { Env } from "../../env";
import type { Statement } from "../../platform/batch";
import { config as settingsOf } from "../../platform/config";
import { type Database, database, inJsonList } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import { queueDelaySeconds } from "../../platform/queue";
import { type AttemptResult, attemptDelivery, type ClaimedDelivery } from "./attempt";
import { attemptStatements } from "./attempt-record";
import { PARALLEL_SENDS } from "./config";
import { inPool } from "./delivery-queue";
import { type HookSigningRow, webhookToSign } from "./hook-row";

/** Queues may hand a message over a little before its delay is up. */
const EARLY_SLACK_MS = 2_000;

interface DeliveryDetails extends HookSigningRow {
  id: string;
  status: DeliveryStatus;
  claimed_until: number | null;
  next_attempt_at: number | null;
  webhook_id: string;
  enabled: number;
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
  const claimedRows = (claimed?.results ?? []) as { id: string; attempt: number }[];
  const detailRows = (details?.results ?? []) as DeliveryDetails[];
  return {
    claimed: new Map(claimedRows.map((c) => [c.id, c.attempt])),
    rows: new Map(detailRows.map((r) => [r.id, r])),
  };
}

/** What to do with a delivery's messages: acknowledge them, or hand them back after a delay. */
type Settlement = { retryInSeconds?: number };
type Settle = (id: string, how: Settlement) => void;

/** A claimed delivery of a webhook that was switched off meanwhile: closed unsent. */
function closeUnsent(db: Database, id: string, attempt: number, now: number): Statement {
  return db
    .update(webhookDeliveries)
    .set({
      status: "failed",
      claimedUntil: null,
      lastError: "Webhook disabled; not sent",
      completedAt: nowIso(now),
      attemptCount: attempt - 1,
    })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.attemptCount, attempt)));
}

/** A delivery this batch did not claim: finished (acknowledge), or someone else's turn (wait). */
function settleUnclaimed(row: DeliveryDetails, now: number): Settlement {
  if (row.status === "succeeded" || row.status === "failed") return {};
  if (row.claimed_until && row.claimed_until >= now)
    return { retryInSeconds: (row.claimed_until - now) / 1000 + 1 };
  return { retryInSeconds: ((row.next_attempt_at ?? now) - now) / 1000 };
}

function claimedDelivery(row: DeliveryDetails, attempt: number): ClaimedDelivery {
  return {
    id: row.id,
    attempt,
    webhook: webhookToSign(row.webhook_id, row),
    event: {
      id: row.event_id,
      type: row.event_type,
      createdAt: row.event_created_at,
      payload: JSON.parse(row.payload) as Record<string, unknown>,
    },
    isPing: row.event_type === "ping",
  };
}

/**
 * Sorts the batch's deliveries after the claim: what to send, what to close unsent, and which messages
 * are settled already (deleted, finished, or claimed by a twin).
 */
function sortClaimed(
  db: Database,
  ids: string[],
  found: Awaited<ReturnType<typeof claim>>,
  now: number,
  settle: Settle,
): { toSend: ClaimedDelivery[]; statements: Statement[] } {
  const toSend: ClaimedDelivery[] = [];
  const statements: Statement[] = [];
  for (const id of ids) {
    const row = found.rows.get(id);
    const attempt = found.claimed.get(id);
    if (!row) {
      settle(id, {}); // the webhook (and with it the delivery) was deleted
    } else if (attempt === undefined) {
      settle(id, settleUnclaimed(row, now));
    } else if (!row.enabled) {
      statements.push(closeUnsent(db, id, attempt, now));
      settle(id, {});
    } else {
      toSend.push(claimedDelivery(row, attempt));
    }
  }
  return { toSend, statements };
}

/**
 * Delivery: sends each claimed delivery once, records the attempt, and acknowledges or schedules the
 * retry with the queue's own delay. A message for a delivery that already ended is acknowledged
 * without sending, so at-least-once delivery of messages never means a second POST.
 */
export async function deliver(env: Env, byId: Map<string, Message<unknown>[]>): Promise<void> {
  const db = database(env.DB);
  const config = settingsOf(env).webhooks;
  const now = Date.now();
  const ids = [...byId.keys()];
  const leaseMs = (Math.ceil(ids.length / PARALLEL_SENDS) + 1) * config.timeoutMs + 30_000;
  const settle: Settle = (id, how) => {
    for (const message of byId.get(id) ?? []) {
      if (how.retryInSeconds === undefined) message.ack();
      else message.retry({ delaySeconds: queueDelaySeconds(how.retryInSeconds) });
    }
  };
  const { toSend, statements } = sortClaimed(db, ids, await claim(env.DB, ids, now, leaseMs), now, settle);

  const results: AttemptResult[] = await inPool(toSend, PARALLEL_SENDS, (d) =>
    attemptDelivery(env, config, d),
  );
  const attempts = toSend.map((delivery, i) => ({ delivery, result: results[i] as AttemptResult }));
  statements.push(...attemptStatements(db, config, attempts, Date.now()));
  // The log is written before any message is acknowledged: if this write fails the batch is
  // retried, and the claims (not yet released) keep a twin from sending again before they expire.
  const [first, ...rest] = statements;
  if (first) await db.batch([first, ...rest]);
  for (const { delivery, result } of attempts)
    settle(delivery.id, result.status === "retrying" ? { retryInSeconds: result.retryInSeconds ?? 0 } : {});
}

/** Deliveries whose messages exhausted the queue's own retries: closed as failed, visibly. */
export async function closeDeadLettered(env: Env, deliveryIds: string[]): Promise<void> {
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
        inJsonList(webhookDeliveries.id, deliveryIds),
        inArray(webhookDeliveries.status, ["pending", "retrying"]),
      ),
    );
}
