import { and, desc, eq, sql } from "drizzle-orm";
import { webhookDeliveries, webhooks } from "../../db/schema";
import { webhookSecretBinding } from "../../platform/crypto/sealed-values";
import { seal } from "../../platform/crypto/sealing";
import { ApiError, validationError } from "../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../platform/http/pagination";
import { newId, nowIso } from "../../platform/ids";
import { checkOutboundUrl } from "../../platform/outbound";
import type { ServiceContext } from "../../platform/service/context";
import { MAX_WEBHOOKS_PER_INSTITUTION } from "./schemas";
import { newSigningSecret } from "./signing";
import { CREATE_WEBHOOK_SQL } from "./sql";

export type WebhookRow = typeof webhooks.$inferSelect;

const HEALTH_WINDOW_HOURS = 24;

/**
 * The URL as it will be stored, or 422 when the outbound gate refuses it. A name that does not
 * resolve yet is accepted: deliveries to it fail with `dns` until it does.
 */
async function checkUrl(ctx: ServiceContext, url: string): Promise<string> {
  const verdict = await checkOutboundUrl(ctx.env, url);
  if (!verdict.ok && verdict.code === "target_refused")
    throw validationError([{ path: "url", message: verdict.problem }]);
  return new URL(url).toString();
}

function normaliseEvents(events: string[]): string[] {
  return events.includes("*") ? ["*"] : [...new Set(events)];
}

/** A page of the institution's webhooks, newest first (ties by id). */
export async function listWebhooks(
  ctx: ServiceContext,
  { institutionId, page }: { institutionId: string; page: PageRequest },
) {
  const { limit, offset } = pageBounds(page);
  const db = ctx.db;
  const where = eq(webhooks.institutionId, institutionId);
  const pageQuery = db
    .select()
    .from(webhooks)
    .where(where)
    .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
    .limit(limit)
    .offset(offset);
  return pageWithTotal(db, pageQuery, webhooks, where);
}

/** The institution's webhook, or 404 (another institution's included). */
export async function findWebhook(
  ctx: ServiceContext,
  { institutionId, id }: { institutionId: string; id: string },
): Promise<WebhookRow> {
  const row = await ctx.db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.institutionId, institutionId)))
    .get();
  if (!row) throw new ApiError("not_found", `No webhook ${id}.`);
  return row;
}

/** The webhook's deliveries of the last 24 hours, counted by outcome. */
export async function webhookHealth(ctx: ServiceContext, webhookId: string) {
  const since = nowIso(ctx.now() - HEALTH_WINDOW_HOURS * 3_600_000);
  const row = await ctx.db
    .select({
      succeeded: sql<number>`coalesce(sum(${webhookDeliveries.status} = 'succeeded'), 0)`,
      failed: sql<number>`coalesce(sum(${webhookDeliveries.status} = 'failed'), 0)`,
      pending: sql<number>`coalesce(sum(${webhookDeliveries.status} IN ('pending', 'retrying')), 0)`,
      lastDeliveryAt: sql<string | null>`max(${webhookDeliveries.createdAt})`,
      lastSuccessAt: sql<
        string | null
      >`max(CASE WHEN ${webhookDeliveries.status} = 'succeeded' THEN ${webhookDeliveries.completedAt} END)`,
      lastFailureAt: sql<
        string | null
      >`max(CASE WHEN ${webhookDeliveries.status} = 'failed' THEN ${webhookDeliveries.completedAt} END)`,
    })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.webhookId, webhookId), sql`${webhookDeliveries.createdAt} >= ${since}`))
    .get();
  const succeeded = row?.succeeded ?? 0;
  const failed = row?.failed ?? 0;
  return {
    window_hours: HEALTH_WINDOW_HOURS,
    succeeded,
    failed,
    pending: row?.pending ?? 0,
    success_rate:
      succeeded + failed > 0 ? Math.round((succeeded / (succeeded + failed)) * 1000) / 1000 : null,
    last_delivery_at: row?.lastDeliveryAt ?? null,
    last_success_at: row?.lastSuccessAt ?? null,
    last_failure_at: row?.lastFailureAt ?? null,
  };
}

export interface CreateWebhookInput {
  url: string;
  events: string[];
  description?: string | null;
  enabled: boolean;
}

/**
 * Creates a webhook with a fresh secret, returned in plain text this once. The limit per institution
 * is checked inside the INSERT, so concurrent creations cannot overshoot it.
 */
export async function createWebhook(
  ctx: ServiceContext,
  { owner, input }: { owner: { institutionId: string; userId: string }; input: CreateWebhookInput },
) {
  const url = await checkUrl(ctx, input.url);
  const secret = newSigningSecret();
  const now = nowIso(ctx.now());
  const id = newId("whk");
  const row: WebhookRow = {
    id,
    institutionId: owner.institutionId,
    url,
    description: input.description ?? null,
    events: normaliseEvents(input.events),
    enabled: input.enabled,
    disabledReason: input.enabled ? null : "manual",
    disabledAt: input.enabled ? null : now,
    secretSealed: await seal(secret, ctx.config.encryptionKey, webhookSecretBinding(id)),
    previousSecretSealed: null,
    previousSecretExpiresAt: null,
    consecutiveFailures: 0,
    failingSince: null,
    createdBy: owner.userId,
    createdAt: now,
    updatedAt: now,
  };
  const result = await ctx.d1
    .prepare(CREATE_WEBHOOK_SQL)
    .bind(
      row.id,
      row.institutionId,
      row.url,
      row.description,
      JSON.stringify(row.events),
      row.enabled ? 1 : 0,
      row.disabledReason,
      row.disabledAt,
      row.secretSealed,
      row.createdBy,
      now,
      MAX_WEBHOOKS_PER_INSTITUTION,
    )
    .run();
  if (result.meta.changes === 0) {
    throw new ApiError(
      "conflict",
      `An institution can have at most ${MAX_WEBHOOKS_PER_INSTITUTION} webhooks; delete one first.`,
    );
  }
  return { row, secret };
}

export interface UpdateWebhookInput {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

export async function updateWebhook(
  ctx: ServiceContext,
  { institutionId, id, input }: { institutionId: string; id: string; input: UpdateWebhookInput },
): Promise<WebhookRow> {
  const current = await findWebhook(ctx, { institutionId, id });
  const now = nowIso(ctx.now());
  const changes: Partial<WebhookRow> = { updatedAt: now };
  if (input.url !== undefined) changes.url = await checkUrl(ctx, input.url);
  // Re-enabling keeps the stored URL only if it still passes: it was saved under the rules of then.
  else if (input.enabled === true && !current.enabled) await checkUrl(ctx, current.url);
  if (input.events !== undefined) changes.events = normaliseEvents(input.events);
  if (input.description !== undefined) changes.description = input.description;
  if (input.enabled === true && !current.enabled) {
    // Re-enabling starts a fresh record: the failures that switched it off are behind it.
    Object.assign(changes, {
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      consecutiveFailures: 0,
      failingSince: null,
    });
  } else if (input.enabled === false && current.enabled) {
    Object.assign(changes, { enabled: false, disabledReason: "manual", disabledAt: now });
  }
  const [updated] = await ctx.db
    .update(webhooks)
    .set(changes)
    .where(and(eq(webhooks.id, id), eq(webhooks.institutionId, institutionId)))
    .returning();
  if (!updated) throw new ApiError("not_found", `No webhook ${id}.`);
  return updated;
}

/** Deleting a webhook deletes its delivery log with it (foreign keys cascade). */
export async function deleteWebhook(
  ctx: ServiceContext,
  { institutionId, id }: { institutionId: string; id: string },
): Promise<void> {
  const result = await ctx.db
    .delete(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.institutionId, institutionId)))
    .run();
  if (result.meta.changes === 0) throw new ApiError("not_found", `No webhook ${id}.`);
}

/**
 * A new secret; the current one becomes the previous one and keeps signing beside it for
 * `previousTtlSeconds`. Rotating again inside that window retires the oldest secret at once.
 */
export async function rotateSecret(
  ctx: ServiceContext,
  {
    institutionId,
    id,
    previousTtlSeconds,
  }: { institutionId: string; id: string; previousTtlSeconds: number },
) {
  const current = await findWebhook(ctx, { institutionId, id });
  const secret = newSigningSecret();
  const now = ctx.now();
  const [updated] = await ctx.db
    .update(webhooks)
    .set({
      secretSealed: await seal(secret, ctx.config.encryptionKey, webhookSecretBinding(id)),
      previousSecretSealed: previousTtlSeconds > 0 ? current.secretSealed : null,
      previousSecretExpiresAt: previousTtlSeconds > 0 ? nowIso(now + previousTtlSeconds * 1000) : null,
      updatedAt: nowIso(now),
    })
    // Only if nobody rotated in between: two racing rotations must not both believe they won.
    .where(and(eq(webhooks.id, id), eq(webhooks.secretSealed, current.secretSealed)))
    .returning();
  if (!updated)
    throw new ApiError(
      "conflict",
      "The secret was rotated by another request at the same moment; fetch the webhook and try again.",
    );
  return { row: updated, secret };
}
