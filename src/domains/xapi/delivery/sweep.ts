import { requeueLost } from "../../../platform/delivery";
import { domainEvent } from "../../../platform/events";
import { nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import {
  FAILING_ENDPOINTS_SQL,
  type FailingEndpointRow,
  MARK_FAILING_NOTIFIED_SQL,
  PURGE_BATCHES_SQL,
  PURGE_STATEMENT_KEYS_SQL,
  PURGE_STATEMENTS_SQL,
} from "./sql";
import { xapiTarget } from "./target";

const DAY_MS = 86_400_000;
/** An endpoint failing without a success for this long is reported (`xapi_endpoint.failing`). */
export const FAILING_AFTER_MS = DAY_MS;
/**
 * Statements are kept 90 days after they were made, with their batch (which holds their log entries
 * and the state they share): the back-fill reaches 90 days back and relies on them — a fact whose
 * statement is still keyed is skipped, so an LRS never receives an id twice.
 */
export const STATEMENT_RETENTION_MS = 90 * DAY_MS;

const SWEEP_LIMIT = 1_000;

/**
 * The minute cron's safety net under the xAPI queue: a batch whose message was lost is queued again
 * about a minute after its attempt's lease or its due time ran out (the delivery engine's
 * `requeueLost`; the claim makes a resend that was not needed harmless). Returns how many.
 */
export function requeueStalledXapiBatches(ctx: ServiceContext): Promise<number> {
  return requeueLost(ctx, xapiTarget);
}

/**
 * `xapi_endpoint.failing`, once per failing run: an enabled endpoint whose requests have failed
 * without a success for 24 hours. Each is marked notified by a conditional update that its event
 * rides on (`eventsIfLastChanged`), so of concurrent sweeps only one writes the event. The event
 * carries the endpoint's id, name, since when it fails and its last error — never a credential.
 */
export async function notifyFailingEndpoints(ctx: ServiceContext): Promise<number> {
  const now = ctx.now();
  const { results } = await ctx.d1
    .prepare(FAILING_ENDPOINTS_SQL)
    .bind(nowIso(now - FAILING_AFTER_MS), SWEEP_LIMIT)
    .all<FailingEndpointRow>();
  let emitted = 0;
  for (const endpoint of results) {
    const event = domainEvent(
      "xapi_endpoint.failing",
      { institutionId: endpoint.institution_id, userId: null },
      {
        endpoint_id: endpoint.id,
        name: endpoint.name,
        failing_since: endpoint.failing_since,
        last_error: endpoint.last_error,
      },
      nowIso(now),
    );
    const { eventIds } = await commit(ctx, {
      statements: [
        ctx.d1.prepare(MARK_FAILING_NOTIFIED_SQL).bind(endpoint.id, endpoint.failing_since, nowIso(now)),
      ],
      events: [event],
      eventsIfLastChanged: true,
    });
    emitted += eventIds.length;
  }
  return emitted;
}

/**
 * Retention: finished batches made 90 days ago or more, 100 a run (about 5,000 statements), with
 * their statements' keys and rows, in one write. Returns how many statements and batches went.
 */
export async function purgeOldXapiStatements(ctx: ServiceContext): Promise<number> {
  const cutoff = nowIso(ctx.now() - STATEMENT_RETENTION_MS);
  const [keys, , batches] = await ctx.d1.batch([
    ctx.d1.prepare(PURGE_STATEMENT_KEYS_SQL).bind(cutoff, PURGE_BATCHES_A_RUN),
    ctx.d1.prepare(PURGE_STATEMENTS_SQL).bind(cutoff, PURGE_BATCHES_A_RUN),
    ctx.d1.prepare(PURGE_BATCHES_SQL).bind(cutoff, PURGE_BATCHES_A_RUN),
  ]);
  return (keys?.meta.changes ?? 0) + (batches?.meta.changes ?? 0);
}

/** Batches purged per run (each up to 50 statements). */
const PURGE_BATCHES_A_RUN = 100;
