import { and, desc, eq, gte, inArray, type SQL, sql } from "drizzle-orm";
import { type DeliveryStatus, webhookDeliveries, webhookDeliveryAttempts } from "../../db/schema";
import { chunk, rowsPerStatement, type Statement } from "../../platform/batch";
import { sendAndRecord } from "../../platform/delivery";
import { ApiError, validationError } from "../../platform/errors";
import { EVENT_RETENTION_MS } from "../../platform/events";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { commit } from "../../platform/service/commit";
import type { ServiceContext } from "../../platform/service/context";
import { EVENT_EXAMPLES } from "./catalogue";
import { enqueueDeliveries, webhookDeliveryTarget } from "./delivery-target";
import { presentDelivery } from "./present";
import type { WebhookRow } from "./service";

type DeliveryRow = typeof webhookDeliveries.$inferSelect;

const RECOVER_LIMIT = 1_000;

async function withAttempts(ctx: ServiceContext, rows: DeliveryRow[]) {
  if (rows.length === 0) return [];
  const attempts = await ctx.db
    .select()
    .from(webhookDeliveryAttempts)
    .where(
      inArray(
        webhookDeliveryAttempts.deliveryId,
        rows.map((r) => r.id),
      ),
    );
  return rows.map((row) =>
    presentDelivery(
      row,
      attempts.filter((a) => a.deliveryId === row.id),
    ),
  );
}

/** A page of the webhook's deliveries with their attempts, newest first (ties by id). */
export async function listDeliveries(
  ctx: ServiceContext,
  {
    webhookId,
    page,
    filters,
  }: { webhookId: string; page: PageRequest; filters: { status?: DeliveryStatus; event?: string } },
) {
  const db = ctx.db;
  const conditions: SQL[] = [eq(webhookDeliveries.webhookId, webhookId)];
  if (filters.status) conditions.push(eq(webhookDeliveries.status, filters.status));
  if (filters.event) conditions.push(eq(webhookDeliveries.eventType, filters.event));
  const where = and(...conditions);
  const { limit, offset } = pageBounds(page);
  const pageQuery = db
    .select()
    .from(webhookDeliveries)
    .where(where)
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit)
    .offset(offset);
  const { rows, total } = await pageWithTotal(db, pageQuery, webhookDeliveries, where);
  return { total, data: await withAttempts(ctx, rows) };
}

async function findDeliveryRow(
  ctx: ServiceContext,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryRow> {
  const row = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)))
    .get();
  if (!row) throw new ApiError("not_found", `No delivery ${deliveryId} for webhook ${webhookId}.`);
  return row;
}

/** One delivery of the webhook with its attempts; 404 when it is not this webhook's. */
export async function getDelivery(
  ctx: ServiceContext,
  { webhookId, deliveryId }: { webhookId: string; deliveryId: string },
) {
  const row = await findDeliveryRow(ctx, webhookId, deliveryId);
  const attempts = await ctx.db
    .select()
    .from(webhookDeliveryAttempts)
    .where(eq(webhookDeliveryAttempts.deliveryId, row.id));
  return presentDelivery(row, attempts);
}

function requireEnabled(webhook: WebhookRow): void {
  if (!webhook.enabled)
    throw new ApiError(
      "conflict",
      `Webhook ${webhook.id} is disabled; re-enable it with PUT before redelivering.`,
    );
}

/** A new, untried delivery of an event to a webhook; `redeliveryOf` names the delivery it repeats. */
function pendingDelivery(
  target: Pick<DeliveryRow, "webhookId" | "eventId" | "eventType" | "redeliveryOf">,
  now: number,
): DeliveryRow {
  return {
    id: newId("dlv"),
    ...target,
    status: "pending",
    attemptCount: 0,
    nextAttemptAt: now,
    claimedUntil: null,
    lastResponseStatus: null,
    lastError: null,
    lastErrorCode: null,
    createdAt: nowIso(now),
    completedAt: null,
  };
}

function redeliveryRow(
  original: Pick<DeliveryRow, "id" | "webhookId" | "eventId" | "eventType">,
  now: number,
): DeliveryRow {
  return pendingDelivery(
    {
      webhookId: original.webhookId,
      eventId: original.eventId,
      eventType: original.eventType,
      redeliveryOf: original.id,
    },
    now,
  );
}

/**
 * A new delivery of the same event (same body and event id, new delivery id), sent through the queue
 * with the usual retries. Only a finished delivery can be redelivered.
 */
export async function redeliver(
  ctx: ServiceContext,
  { webhook, deliveryId }: { webhook: WebhookRow; deliveryId: string },
) {
  requireEnabled(webhook);
  const original = await findDeliveryRow(ctx, webhook.id, deliveryId);
  if (original.status === "pending" || original.status === "retrying") {
    throw new ApiError(
      "conflict",
      `Delivery ${deliveryId} is still ${original.status}; wait for it to finish.`,
    );
  }
  const row = redeliveryRow(original, ctx.now());
  await ctx.db.insert(webhookDeliveries).values(row).run();
  await enqueueDeliveries(ctx, [row.id]);
  return presentDelivery(row, []);
}

/**
 * Redelivers each event whose latest delivery to this webhook failed since `since` (like Svix's
 * recover): one new delivery per event, however many times it failed before.
 */
export async function recover(
  ctx: ServiceContext,
  { webhook, since: sinceText }: { webhook: WebhookRow; since: string },
) {
  requireEnabled(webhook);
  const now = ctx.now();
  const since = Date.parse(sinceText);
  if (since > now) throw validationError([{ path: "since", message: "must not be in the future" }]);
  if (since < now - EVENT_RETENTION_MS)
    throw validationError([
      { path: "since", message: "must be within the last 30 days, the retention of events and deliveries" },
    ]);
  const db = ctx.db;
  const failed = await db
    .select({
      id: webhookDeliveries.id,
      webhookId: webhookDeliveries.webhookId,
      eventId: webhookDeliveries.eventId,
      eventType: webhookDeliveries.eventType,
    })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.webhookId, webhook.id),
        eq(webhookDeliveries.status, "failed"),
        gte(webhookDeliveries.createdAt, nowIso(since)),
        sql`${webhookDeliveries.eventType} != 'ping'`,
        sql`NOT EXISTS (SELECT 1 FROM webhook_deliveries later WHERE later.webhook_id = ${webhookDeliveries.webhookId} AND later.event_id = ${webhookDeliveries.eventId} AND (later.created_at > ${webhookDeliveries.createdAt} OR (later.created_at = ${webhookDeliveries.createdAt} AND later.id > ${webhookDeliveries.id})))`,
      ),
    )
    .orderBy(webhookDeliveries.id)
    .limit(RECOVER_LIMIT + 1);
  const chosen = failed.slice(0, RECOVER_LIMIT);
  const rows = chosen.map((d) => redeliveryRow(d, now));
  const inserts: Statement[] = [];
  for (const part of chunk(rows, rowsPerStatement(13)))
    inserts.push(db.insert(webhookDeliveries).values(part));
  if (inserts.length > 0) await db.batch(inserts as [Statement, ...Statement[]]);
  await enqueueDeliveries(
    ctx,
    rows.map((r) => r.id),
  );
  return {
    redelivered: rows.length,
    deliveries: rows.map((r) => r.id),
    has_more: failed.length > RECOVER_LIMIT,
  };
}

/**
 * The test ping: a `ping` event and its delivery, sent now, once, and answered with the result.
 * It never retries and never changes the webhook's health, whatever the receiver answers.
 */
export async function sendTestPing(ctx: ServiceContext, webhook: WebhookRow) {
  const db = ctx.db;
  const now = ctx.now();
  const event = {
    id: newId("evt"),
    type: "ping",
    institutionId: webhook.institutionId,
    userId: null,
    payload: { webhook_id: webhook.id, message: EVENT_EXAMPLES.ping.message },
    createdAt: nowIso(now),
    // Never fanned out nor dispatched (so never swept): a ping goes to this webhook only.
    fannedOutAt: nowIso(now),
    dispatchedAt: nowIso(now),
  };
  // Inserted already claimed for its one attempt: no queue message exists for it.
  const delivery: DeliveryRow = {
    ...pendingDelivery(
      { webhookId: webhook.id, eventId: event.id, eventType: "ping", redeliveryOf: null },
      now,
    ),
    attemptCount: 1,
    claimedUntil: now + 60_000,
  };
  // Born fanned out and dispatched, the ping is written but never published; commit writes events
  // ahead of the statements, so the delivery row's foreign key finds it.
  await commit(ctx, { statements: [db.insert(webhookDeliveries).values(delivery)], events: [event] });
  const claimed = { id: delivery.id, attempt: 1, webhook, event, isPing: true };
  await sendAndRecord(ctx, webhookDeliveryTarget, [claimed], { onRecorded: () => {} });
  return getDelivery(ctx, { webhookId: webhook.id, deliveryId: delivery.id });
}
