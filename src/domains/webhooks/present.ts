import type { z } from "@hono/zod-openapi";
import type { webhookDeliveries, webhookDeliveryAttempts, webhooks } from "../../db/schema";
import { nowIso } from "../../platform/ids";
import { type DeliverySchema, DISABLED_REASONS, type WebhookSchema } from "./schemas";

type DisabledReason = (typeof DISABLED_REASONS)[number];

const disabledReason = (stored: string | null): DisabledReason =>
  DISABLED_REASONS.find((reason) => reason === stored) ?? "manual";

export function presentWebhook(
  row: typeof webhooks.$inferSelect,
  now: number,
): z.infer<typeof WebhookSchema> {
  const rotating = row.previousSecretExpiresAt && Date.parse(row.previousSecretExpiresAt) > now;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    disabled_reason: row.enabled ? null : disabledReason(row.disabledReason),
    disabled_at: row.enabled ? null : row.disabledAt,
    consecutive_failures: row.consecutiveFailures,
    failing_since: row.failingSince,
    previous_secret_expires_at: rotating ? row.previousSecretExpiresAt : null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function presentDelivery(
  row: typeof webhookDeliveries.$inferSelect,
  attempts: (typeof webhookDeliveryAttempts.$inferSelect)[],
): z.infer<typeof DeliverySchema> {
  const open = row.status === "pending" || row.status === "retrying";
  return {
    id: row.id,
    webhook_id: row.webhookId,
    event_id: row.eventId,
    event_type: row.eventType,
    status: row.status,
    attempt_count: row.attemptCount,
    next_attempt_at: open && row.nextAttemptAt !== null ? nowIso(row.nextAttemptAt) : null,
    last_response_status: row.lastResponseStatus,
    last_error: row.lastError,
    last_error_code: row.lastErrorCode,
    redelivery_of: row.redeliveryOf,
    created_at: row.createdAt,
    completed_at: row.completedAt,
    attempts: attempts
      .sort((a, b) => a.number - b.number)
      .map((a) => ({
        number: a.number,
        started_at: a.startedAt,
        duration_ms: a.durationMs,
        response_status: a.responseStatus,
        error: a.error,
        error_code: a.errorCode,
        response_body: a.responseBody,
      })),
  };
}
