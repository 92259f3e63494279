import { and, eq, gt, inArray, sql } from "drizzle-orm";
import { type DeliveryStatus, webhookDeliveries, webhookDeliveryAttempts, webhooks } from "../../db/schema";
import type { Env } from "../../env";
import type { Statement } from "../../platform/batch";
import { utf8 } from "../../platform/crypto/encoding";
import { openSealed, webhookSecretBinding } from "../../platform/crypto/sealed-values";
import { type Database, inJsonList } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import type { DeliveryConfig } from "./config";
import { parseRetryAfter, retryDelaySeconds } from "./retry-policy";
import { type AttemptOutcome, postSigned } from "./send";
import { deliveryBody, signDelivery } from "./signing";

type WebhookRow = typeof webhooks.$inferSelect;

export interface ClaimedDelivery {
  id: string;
  /** The number of this attempt, 1-based; the claim counted it. */
  attempt: number;
  webhook: Pick<
    WebhookRow,
    "id" | "url" | "secretSealed" | "previousSecretSealed" | "previousSecretExpiresAt" | "consecutiveFailures"
  >;
  /** `bytes` memoises the encoded body: the deliveries of one event to many webhooks share it. */
  event: {
    id: string;
    type: string;
    createdAt: string;
    payload: Record<string, unknown>;
    bytes?: Uint8Array;
  };
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

// A webhook signs many deliveries with one secret: unseal it once per isolate, not per delivery.
// Keyed by the webhook and the sealed text (a fresh IV per seal), so a rotation is a new entry,
// never a stale one, and a value copied into another webhook's row is opened for that row (and fails).
const unsealed = new Map<string, Promise<string>>();
function unsealCached(env: Env, webhookId: string, sealed: string): Promise<string> {
  const cacheKey = `${webhookId} ${sealed}`;
  let plain = unsealed.get(cacheKey);
  if (!plain) {
    if (unsealed.size > 1000) unsealed.clear();
    plain = openSealed(env, sealed, webhookSecretBinding(webhookId));
    plain.catch(() => unsealed.delete(cacheKey));
    unsealed.set(cacheKey, plain);
  }
  return plain;
}

/** The secrets that sign now: the current one, and the previous one during its rotation window. */
export async function activeSecrets(
  webhook: ClaimedDelivery["webhook"],
  env: Env,
  now: number,
): Promise<string[]> {
  const secrets = [await unsealCached(env, webhook.id, webhook.secretSealed)];
  if (
    webhook.previousSecretSealed &&
    webhook.previousSecretExpiresAt &&
    Date.parse(webhook.previousSecretExpiresAt) > now
  ) {
    secrets.push(await unsealCached(env, webhook.id, webhook.previousSecretSealed));
  }
  return secrets;
}

/** Signs and sends one claimed delivery and decides what happens next; writes nothing. */
export async function attemptDelivery(
  env: Env,
  config: DeliveryConfig,
  delivery: ClaimedDelivery,
  random: () => number = Math.random,
): Promise<AttemptResult> {
  const started = Date.now();
  const signed = await signDelivery({
    secrets: await activeSecrets(delivery.webhook, env, started),
    webhookId: delivery.webhook.id,
    deliveryId: delivery.id,
    eventType: delivery.event.type,
    body: (delivery.event.bytes ??= utf8(deliveryBody(delivery.event))),
    timestamp: Math.floor(started / 1000),
  });
  const outcome = await postSigned(delivery.webhook.url, signed, config.timeoutMs);
  const base = {
    outcome,
    startedAt: nowIso(started),
    disable: null,
    retryInSeconds: null,
    nextAttemptAt: null,
  } as const;
  if (outcome.ok) return { ...base, status: "succeeded" };
  if (delivery.isPing) return { ...base, status: "failed" };
  // 410 Gone: the receiver says the endpoint no longer exists; retrying would only be noise.
  if (outcome.responseStatus === 410) return { ...base, status: "failed", disable: "gone" };
  const finished = Date.now();
  const delay = retryDelaySeconds(
    delivery.attempt,
    config.retrySchedule,
    parseRetryAfter(outcome.retryAfter, finished),
    random,
  );
  if (delay === null) return { ...base, status: "failed" };
  return { ...base, status: "retrying", retryInSeconds: delay, nextAttemptAt: finished + delay * 1000 };
}

/**
 * The writes that record a set of attempts: their log rows, each delivery's new state (only if the
 * claim is still ours, so a twin can never overwrite it), and the webhooks' health counters.
 * Successes, the common case, share one UPDATE per (attempt number, status code), so a batch of
 * deliveries costs a handful of statements rather than two or three each.
 */
export function attemptStatements(
  db: Database,
  config: DeliveryConfig,
  attempts: { delivery: ClaimedDelivery; result: AttemptResult }[],
  now: number,
): Statement[] {
  const statements: Statement[] = [];
  const logRows = attempts.map(({ delivery, result }) => [
    delivery.id,
    delivery.attempt,
    result.startedAt,
    result.outcome.durationMs,
    result.outcome.responseStatus,
    result.outcome.error,
    result.outcome.responseBody,
  ]);
  // One statement for the whole log: the rows travel as one JSON parameter.
  if (logRows.length > 0) {
    statements.push(
      db
        .insert(webhookDeliveryAttempts)
        .select(
          // In the table's column order: delivery_id, number, started_at, duration_ms, response_status, error, response_body.
          sql`SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6 FROM json_each(${JSON.stringify(logRows)}) WHERE true`,
        )
        .onConflictDoNothing(),
    );
  }

  const open = inArray(webhookDeliveries.status, ["pending", "retrying"]);
  const successGroups = new Map<string, string[]>();
  for (const { delivery, result } of attempts) {
    if (result.status === "succeeded") {
      const key = `${delivery.attempt}:${result.outcome.responseStatus}`;
      successGroups.set(key, [...(successGroups.get(key) ?? []), delivery.id]);
      continue;
    }
    const terminal = result.status === "failed";
    statements.push(
      db
        .update(webhookDeliveries)
        .set({
          status: result.status,
          nextAttemptAt: result.nextAttemptAt,
          claimedUntil: null,
          lastResponseStatus: result.outcome.responseStatus,
          lastError: result.outcome.error,
          completedAt: terminal ? nowIso(now) : null,
        })
        .where(
          and(
            eq(webhookDeliveries.id, delivery.id),
            eq(webhookDeliveries.attemptCount, delivery.attempt),
            open,
          ),
        ),
    );
  }
  for (const [key, ids] of successGroups) {
    const [attempt, status] = key.split(":");
    statements.push(
      db
        .update(webhookDeliveries)
        .set({
          status: "succeeded",
          nextAttemptAt: null,
          claimedUntil: null,
          lastResponseStatus: Number(status),
          lastError: null,
          completedAt: nowIso(now),
        })
        .where(
          and(
            inJsonList(webhookDeliveries.id, ids),
            eq(webhookDeliveries.attemptCount, Number(attempt)),
            open,
          ),
        ),
    );
  }

  const recovered = new Set<string>();
  for (const { delivery, result } of attempts) {
    if (delivery.isPing) continue;
    const hook = delivery.webhook.id;
    if (result.status === "succeeded") {
      // Only a webhook that was failing needs its count reset.
      if (delivery.webhook.consecutiveFailures > 0 && !recovered.has(hook)) {
        recovered.add(hook);
        statements.push(
          db
            .update(webhooks)
            .set({ consecutiveFailures: 0, failingSince: null })
            .where(and(eq(webhooks.id, hook), gt(webhooks.consecutiveFailures, 0))),
        );
      }
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
  }
  return statements;
}

/**
 * One more event that ended `failed`. The webhook is switched off once the run is long enough in
 * both count and time, decided in the statement itself so concurrent consumers cannot both miss it.
 */
export function failureCountStatement(
  db: Database,
  config: DeliveryConfig,
  webhookId: string,
  now: number,
): Statement {
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
