import { and, eq, gt, inArray, sql } from "drizzle-orm";
import { webhookDeliveries, webhookDeliveryAttempts, webhooks, type DeliveryStatus } from "../../db/schema";
import type { Env } from "../../env";
import type { Statement } from "../../platform/batch";
import { unseal } from "../../platform/crypto/sealing";
import type { Database } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import type { DeliveryConfig } from "./config";
import { parseRetryAfter, retryDelaySeconds } from "./retry-policy";
import { postSigned, type AttemptOutcome } from "./send";
import { deliveryBody, signDelivery } from "./signing";

type WebhookRow = typeof webhooks.$inferSelect;

export interface ClaimedDelivery {
  id: string;
  /** The number of this attempt, 1-based; the claim counted it. */
  attempt: number;
  webhook: WebhookRow;
  event: { id: string; type: string; createdAt: string; payload: Record<string, unknown> };
  /** Test pings are tried once and never touch the webhook's health. */
  isPing: boolean;
}

export interface AttemptResult {
  outcome: AttemptOutcome;
  status: DeliveryStatus;
  startedAt: string;
  /** Seconds until the retry, when `status` is `retrying`. */
  retryInSeconds: number | null;
  nextAttemptAt: number | null;
  /** Set when this answer switches the webhook off (`gone`). */
  disable: "gone" | null;
}

/** The secrets that sign now: the current one, and the previous one during its rotation window. */
export async function activeSecrets(webhook: WebhookRow, encryptionKey: string, now: number): Promise<string[]> {
  const secrets = [await unseal(webhook.secretSealed, encryptionKey)];
  if (webhook.previousSecretSealed && webhook.previousSecretExpiresAt && Date.parse(webhook.previousSecretExpiresAt) > now) {
    secrets.push(await unseal(webhook.previousSecretSealed, encryptionKey));
  }
  return secrets;
}

/** Signs and sends one claimed delivery and decides what happens next; writes nothing. */
export async function attemptDelivery(env: Env, config: DeliveryConfig, delivery: ClaimedDelivery, random: () => number = Math.random): Promise<AttemptResult> {
  const started = Date.now();
  const signed = await signDelivery({
    secrets: await activeSecrets(delivery.webhook, env.ENCRYPTION_KEY, started),
    webhookId: delivery.webhook.id,
    deliveryId: delivery.id,
    eventType: delivery.event.type,
    body: deliveryBody(delivery.event),
    timestamp: Math.floor(started / 1000),
  });
  const outcome = await postSigned(delivery.webhook.url, signed, config.timeoutMs);
  const base = { outcome, startedAt: nowIso(started), disable: null, retryInSeconds: null, nextAttemptAt: null } as const;
  if (outcome.ok) return { ...base, status: "succeeded" };
  if (delivery.isPing) return { ...base, status: "failed" };
  // 410 Gone: the receiver says the endpoint no longer exists; retrying would only be noise.
  if (outcome.responseStatus === 410) return { ...base, status: "failed", disable: "gone" };
  const finished = Date.now();
  const delay = retryDelaySeconds(delivery.attempt, config.retrySchedule, parseRetryAfter(outcome.retryAfter, finished), random);
  if (delay === null) return { ...base, status: "failed" };
  return { ...base, status: "retrying", retryInSeconds: delay, nextAttemptAt: finished + delay * 1000 };
}

/**
 * The writes that record one attempt: its log row, the delivery's new state (only if the claim is
 * still ours, so a twin can never overwrite it), and the webhook's health counters.
 */
export function attemptStatements(db: Database, config: DeliveryConfig, delivery: ClaimedDelivery, result: AttemptResult, now: number): Statement[] {
  const { outcome } = result;
  const terminal = result.status === "succeeded" || result.status === "failed";
  const statements: Statement[] = [
    db
      .insert(webhookDeliveryAttempts)
      .values({
        deliveryId: delivery.id,
        number: delivery.attempt,
        startedAt: result.startedAt,
        durationMs: outcome.durationMs,
        responseStatus: outcome.responseStatus,
        error: outcome.error,
        responseBody: outcome.responseBody,
      })
      .onConflictDoNothing(),
    db
      .update(webhookDeliveries)
      .set({
        status: result.status,
        nextAttemptAt: result.nextAttemptAt,
        claimedUntil: null,
        lastResponseStatus: outcome.responseStatus,
        lastError: outcome.error,
        completedAt: terminal ? nowIso(now) : null,
      })
      .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.attemptCount, delivery.attempt), inArray(webhookDeliveries.status, ["pending", "retrying"]))),
  ];
  if (delivery.isPing) return statements;
  const hook = delivery.webhook.id;
  if (result.status === "succeeded") {
    statements.push(db.update(webhooks).set({ consecutiveFailures: 0, failingSince: null }).where(and(eq(webhooks.id, hook), gt(webhooks.consecutiveFailures, 0))));
  } else if (result.disable === "gone") {
    statements.push(
      db
        .update(webhooks)
        .set({ enabled: false, disabledReason: "gone", disabledAt: nowIso(now), updatedAt: nowIso(now) })
        .where(and(eq(webhooks.id, hook), eq(webhooks.enabled, true))),
    );
  } else if (result.status === "failed") {
    statements.push(failureCountStatement(db, config, hook, now));
  }
  return statements;
}

/**
 * One more event that ended `failed`. The webhook is switched off once the run is long enough in
 * both count and time, decided in the statement itself so concurrent consumers cannot both miss it.
 */
export function failureCountStatement(db: Database, config: DeliveryConfig, webhookId: string, now: number): Statement {
  const nowText = nowIso(now);
  const cutoff = nowIso(now - config.disableAfterMs);
  const tripped = sql`(${webhooks.consecutiveFailures} + 1 >= ${config.disableAfterFailures} AND coalesce(${webhooks.failingSince}, ${nowText}) <= ${cutoff} AND ${webhooks.enabled} = 1)`;
  return db
    .update(webhooks)
    .set({
      consecutiveFailures: sql`${webhooks.consecutiveFailures} + 1`,
      failingSince: sql`coalesce(${webhooks.failingSince}, ${nowText})`,
      enabled: sql`CASE WHEN ${tripped} THEN 0 ELSE ${webhooks.enabled} END`,
      disabledReason: sql`CASE WHEN ${tripped} THEN 'too_many_failures' ELSE ${webhooks.disabledReason} END`,
      disabledAt: sql`CASE WHEN ${tripped} THEN ${nowText} ELSE ${webhooks.disabledAt} END`,
    })
    .where(eq(webhooks.id, webhookId));
}
