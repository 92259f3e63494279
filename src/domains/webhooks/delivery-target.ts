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
import { webhookToSign } from "./hook-row";
import { DELIVERY_DETAILS_SQL, type DeliveryDetailsRow } from "./sql";

/**
 * Webhook delivery as a target of the delivery engine (platform/delivery): a delivery row per
 * (event, webhook), read with its webhook and event in the claim's round trip, signed and POSTed
 * (attempt.ts), recorded in the attempt log with the webhook's health (attempt-record.ts).
 */

/** A message of the delivery queue: one delivery to attempt. */
export const DeliveryMessage = z.object({ delivery_id: z.string().min(1) });
export type DeliveryMessage = z.infer<typeof DeliveryMessage>;

type DeliveryDetails = DeliveryDetailsRow & WorkState;

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
  load: (d1, idsJson) => d1.prepare(DELIVERY_DETAILS_SQL).bind(idsJson),
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
