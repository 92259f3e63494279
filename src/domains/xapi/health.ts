import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import { ENDPOINT_HEALTH_SQL, type EndpointHealthRow } from "./sql";

/** The window of `sent_24h` and `failed_24h`. */
const HEALTH_WINDOW_MS = 24 * 3_600_000;

/** The counts of an endpoint's health (the rest is on its row). */
export interface HealthCounts {
  sent: number;
  failed: number;
  pending: number;
}

const NO_STATEMENTS: HealthCounts = { sent: 0, failed: 0, pending: 0 };

/** The statement counts of `endpointIds` (one statement for them all). */
export async function endpointHealth(
  ctx: ServiceContext,
  endpointIds: string[],
): Promise<Map<string, HealthCounts>> {
  const counts = new Map<string, HealthCounts>();
  if (endpointIds.length === 0) return counts;
  const { results } = await ctx.d1
    .prepare(ENDPOINT_HEALTH_SQL)
    .bind(JSON.stringify(endpointIds), nowIso(ctx.now() - HEALTH_WINDOW_MS))
    .all<EndpointHealthRow>();
  for (const row of results)
    counts.set(row.endpoint_id, { sent: row.sent, failed: row.failed, pending: row.pending });
  return counts;
}

/** One endpoint's counts. */
export async function healthOf(ctx: ServiceContext, endpointId: string): Promise<HealthCounts> {
  return (await endpointHealth(ctx, [endpointId])).get(endpointId) ?? NO_STATEMENTS;
}
