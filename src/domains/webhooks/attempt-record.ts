import { and, eq, gt, inArray, sql } from "drizzle-orm";
import { webhookDeliveries, webhookDeliveryAttempts, webhooks } from "../../db/schema";
import type { Statement } from "../../platform/batch";
import { type Database, inJsonList } from "../../platform/db";
import { nowIso } from "../../platform/ids";
import type { AttemptResult, ClaimedDelivery } from "./attempt";
import type { DeliveryConfig } from "./config";

/** The writes that record attempts (attempt.ts makes them): the log, the deliveries, the webhooks. */

export type RecordedAttempt = { delivery: ClaimedDelivery; result: AttemptResult };

/**
 * The writes that record a set of attempts: their log rows, each delivery's new state (only if the
 * claim is still ours, so a twin can never overwrite it), and the webhooks' health counters.
 */
export function attemptStatements(
  db: Database,
  config: DeliveryConfig,
  attempts: RecordedAttempt[],
  now: number,
): Statement[] {
  if (attempts.length === 0) return [];
  return [
    attemptLogStatement(db, attempts),
    ...deliveryStateStatements(db, attempts, now),
    ...healthStatements(db, config, attempts, now),
  ];
}

/** One statement for the whole attempt log: the rows travel as one JSON parameter. */
function attemptLogStatement(db: Database, attempts: RecordedAttempt[]): Statement {
  const logRows = attempts.map(({ delivery, result }) => [
    delivery.id,
    delivery.attempt,
    result.startedAt,
    result.outcome.durationMs,
    result.outcome.status,
    result.outcome.error,
    result.outcome.errorCode,
    result.outcome.bodyPrefix,
  ]);
  return db
    .insert(webhookDeliveryAttempts)
    .select(
      // In the schema's column order: delivery_id, number, started_at, duration_ms, response_status,
      // error, error_code, response_body.
      sql`SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7 FROM json_each(${JSON.stringify(logRows)}) WHERE true`,
    )
    .onConflictDoNothing();
}

/**
 * Each delivery's new state. Successes, the common case, share one UPDATE per (attempt number, status
 * code), so a batch of deliveries costs a handful of statements rather than one each.
 */
function deliveryStateStatements(db: Database, attempts: RecordedAttempt[], now: number): Statement[] {
  const statements: Statement[] = [];
  const open = inArray(webhookDeliveries.status, ["pending", "retrying"]);
  const successGroups = new Map<string, string[]>();
  for (const { delivery, result } of attempts) {
    if (result.status === "succeeded") {
      const key = `${delivery.attempt}:${result.outcome.status}`;
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
          lastResponseStatus: result.outcome.status,
          lastError: result.outcome.error,
          lastErrorCode: result.outcome.errorCode,
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
          lastErrorCode: null,
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

  return statements;
}

/**
 * What a set of attempts does to their webhooks: a success resets a failing one's count, a failure
 * that ended a delivery counts, and a 410 or a refused target switches it off. A test ping touches
 * nothing but the last.
 */
function healthStatements(
  db: Database,
  config: DeliveryConfig,
  attempts: RecordedAttempt[],
  now: number,
): Statement[] {
  const statements: Statement[] = [];
  const recovered = new Set<string>();
  for (const { delivery, result } of attempts) {
    const hook = delivery.webhook.id;
    if (result.disable) {
      statements.push(
        db
          .update(webhooks)
          .set({
            enabled: false,
            disabledReason: result.disable,
            disabledAt: nowIso(now),
            updatedAt: nowIso(now),
          })
          .where(and(eq(webhooks.id, hook), eq(webhooks.enabled, true))),
      );
    } else if (delivery.isPing) {
    } else if (result.status === "succeeded") {
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
