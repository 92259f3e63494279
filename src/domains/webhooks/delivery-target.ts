import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { webhookDeliveries } from "../../db/schema";
import {
  type Closed,
  type DeliveryTarget,
  enqueue,
  PARALLEL_SENDS,
  type WorkState,
} from "../../platform/delivery";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import { type AttemptResult, attemptDelivery, type ClaimedDelivery } from "./attempt";
import { attemptStatements } from "./attempt-record";
import { type HookSigningRow, webhookToSign } from "./hook-row";

/**
 * Webhook delivery as a target of the delivery engine (platform/delivery): a delivery row per
 * (event, webhook), read with its webhook and event in the claim's round trip, signed and POSTed
 * (attempt.ts), recorded in the attempt log with the webhook's health (attempt-record.ts).
 */

/** A message of the delivery queue: one delivery to attempt. */
export const DeliveryMessage = z.object({ delivery_id: z.string().min(1) });
export type DeliveryMessage = z.infer<typeof DeliveryMessage>;

interface DeliveryDetails extends HookSigningRow, WorkState {
  webhook_id: string;
  enabled: number;
  event_id: string;
  event_type: string;
  event_created_at: string;
  payload: string;
}

// The hot path of every delivery, in plain SQL on the D1 binding: the ORM's row mapping was a tenth of
// the consumer's CPU time. Ids travel as one JSON parameter (D1 binds at most 100 per statement).
const DETAILS_SQL = `SELECT d.id, d.status, d.claimed_until, d.next_attempt_at, w.id AS webhook_id, w.url, w.enabled, w.secret_sealed,
    w.previous_secret_sealed, w.previous_secret_expires_at, w.consecutive_failures, e.id AS event_id, e.type AS event_type,
    e.created_at AS event_created_at, e.payload
  FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN outbox_events e ON e.id = d.event_id
  WHERE d.id IN (SELECT value FROM json_each(?1))`;

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

export const webhookDeliveryTarget: DeliveryTarget<
  DeliveryMessage,
  DeliveryDetails,
  ClaimedDelivery,
  AttemptResult
> = {
  name: "webhooks",
  table: "webhook_deliveries",
  message: {
    schema: DeliveryMessage,
    idOf: (body) => body.delivery_id,
    of: (id) => ({ delivery_id: id }),
  },
  queue: (env) => env.WEBHOOK_QUEUE,
  deadLetter: (env) => env.WEBHOOK_DLQ,
  deadLetteredError: "Dead-lettered: the delivery queue gave up on this message",
  leaseMs: (ctx, count) => (Math.ceil(count / PARALLEL_SENDS) + 1) * ctx.config.webhooks.timeoutMs + 30_000,
  load: (d1, idsJson) => d1.prepare(DETAILS_SQL).bind(idsJson),
  prepare(ctx, claimed, now) {
    const send: ClaimedDelivery[] = [];
    const close: Closed[] = [];
    for (const { row, attempt } of claimed) {
      if (row.enabled) {
        send.push(claimedDelivery(row, attempt));
        continue;
      }
      // A webhook switched off meanwhile: its claimed delivery is closed unsent.
      close.push({
        id: row.id,
        statements: [
          ctx.db
            .update(webhookDeliveries)
            .set({
              status: "failed",
              claimedUntil: null,
              lastError: "Webhook disabled; not sent",
              completedAt: nowIso(now),
              attemptCount: attempt - 1,
            })
            .where(and(eq(webhookDeliveries.id, row.id), eq(webhookDeliveries.attemptCount, attempt))),
        ],
      });
    }
    return { send, close };
  },
  send: (ctx, delivery) => attemptDelivery(ctx, delivery),
  record: (ctx, attempts, now) =>
    attemptStatements(
      ctx.db,
      ctx.config.webhooks,
      attempts.map(({ item, result }) => ({ delivery: item, result })),
      now,
    ),
};

/** Sends one message per delivery; `delaySeconds[i]`, when given, delays the i-th. */
export function enqueueDeliveries(
  ctx: ServiceContext,
  deliveryIds: readonly string[],
  delaySeconds?: readonly number[],
): Promise<void> {
  return enqueue(ctx, webhookDeliveryTarget, deliveryIds, delaySeconds);
}
