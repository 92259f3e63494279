import type { z } from "@hono/zod-openapi";
import type { LogEntry } from "./forwarding-log";
import type { HealthCounts } from "./health";
import type { EndpointRow } from "./lrs-client";
import type { XapiEndpointSchema, XapiStatementLogSchema } from "./schemas";

/** An endpoint on the wire: its credentials without the secret, and its health. */
export function presentEndpoint(row: EndpointRow, counts: HealthCounts): z.infer<typeof XapiEndpointSchema> {
  return {
    id: row.id,
    name: row.name,
    endpoint: row.endpoint,
    version: row.version,
    auth:
      row.authType === "basic"
        ? { type: "basic", username: row.username ?? "", secret_set: true }
        : {
            type: "oauth2",
            token_url: row.tokenUrl ?? "",
            client_id: row.clientId ?? "",
            scope: row.scope,
            secret_set: true,
          },
    activities: row.activities,
    actor_format: row.actorFormat,
    enabled: row.enabled,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    health: {
      sent_24h: counts.sent,
      failed_24h: counts.failed,
      pending: counts.pending,
      last_success_at: row.lastSuccessAt,
      last_error_at: row.lastErrorAt,
      last_error: row.lastError,
      failing_since: row.failingSince,
    },
  };
}

export function presentStatement(row: LogEntry): z.infer<typeof XapiStatementLogSchema> {
  return {
    id: row.id,
    verb: row.verb,
    activity: row.activityId,
    user_id: row.userId,
    occurred_at: row.occurredAt,
    status: row.status,
    attempts: row.attempts,
    last_error: row.lastError,
    sent_at: row.sentAt,
    created_at: row.createdAt,
  };
}
