import type { z } from "@hono/zod-openapi";
import type { Backfill } from "./jobs";
import type { XapiBackfillSchema } from "./schemas";

/** A back-fill on the wire. */
export function presentBackfill(row: Backfill): z.infer<typeof XapiBackfillSchema> {
  return {
    id: row.id,
    endpoint_id: row.endpointId,
    since: row.since,
    until: row.until,
    status: row.status,
    statements_queued: row.statementsQueued,
    error: row.error,
    created_at: row.createdAt,
    completed_at: row.completedAt,
  };
}
