import { eq } from "drizzle-orm";
import { xapiEndpoints } from "../../../db/schema";
import { isBatchGuardFailure } from "../../../platform/batch";
import { EVENT_RETENTION_MS } from "../../../platform/events";
import { nowIso } from "../../../platform/ids";
import { renewed } from "../../../platform/jobs/lease";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { offerFacts } from "../delivery/offer";
import {
  BACKFILL_SOURCES,
  type Backfill,
  type BackfillCursor,
  type BackfillSource,
  markCompleted,
  markFailed,
  saveCheckpoint,
} from "./jobs";
import { FACT_SOURCES, type SourceScope } from "./sources";
import {
  BACKFILL_HELD_GUARD,
  FAILED_STATEMENTS_SQL,
  type FailedStatementRow,
  FORGET_CHECKPOINT_SQL,
  FORGET_FAILED_ENTRIES_SQL,
  FORGET_FAILED_KEYS_SQL,
  FORGET_FAILED_SQL,
} from "./sql";

export const ENDPOINT_DISABLED =
  "The endpoint was disabled during the back-fill; enable it and start a new back-fill.";

/** `completed` or `failed`: the job ended here; `continue`: out of time, hand over; `lost`: another holder has it. */
export type RunOutcome = "completed" | "failed" | "continue" | "lost";

const FIRST: BackfillCursor = { source: "failed", after: null };

/**
 * The cursor at the start of the next source after `source` that the endpoint needs (a source of
 * activities it does not forward is never read), or null after the last.
 */
function nextSource(source: BackfillSource, wants: SourceScope["wants"]): BackfillCursor | null {
  for (const next of BACKFILL_SOURCES.slice(BACKFILL_SOURCES.indexOf(source) + 1)) {
    if (next === "failed" || FACT_SOURCES[next].needed(wants)) return { source: next, after: null };
  }
  return null;
}

/**
 * One invocation's share of a back-fill, under its lease: from the checkpoint, chunk after chunk —
 * a keyset page of one source, offered (facts) or forgotten to be offered again (failed statements), then the
 * checkpoint, guarded on the lease — until every source is read or, at least one chunk done, the
 * deadline has passed. The endpoint is read fresh: its activities and actor format as they are now;
 * disabled meanwhile, the back-fill fails; deleted, its row went with it.
 */
export async function runBackfill(
  ctx: ServiceContext,
  input: { job: Backfill; leaseId: string; deadline: number },
): Promise<RunOutcome> {
  const { job, leaseId, deadline } = input;
  const endpoint = await ctx.db
    .select()
    .from(xapiEndpoints)
    .where(eq(xapiEndpoints.id, job.endpointId))
    .get();
  if (!endpoint) return "lost";
  if (!endpoint.enabled) {
    await markFailed(ctx, { jobId: job.id, reason: ENDPOINT_DISABLED, leaseId });
    return "failed";
  }
  const scope: SourceScope = {
    institutionId: endpoint.institutionId,
    since: job.since,
    until: job.until,
    wants: new Set(endpoint.activities),
  };
  const limit = ctx.config.xapiBackfill.chunkSize;
  let cursor: BackfillCursor | null = (job.cursor as unknown as BackfillCursor | null) ?? FIRST;
  while (cursor) {
    const { source, after } = cursor;
    if (source !== "failed" && !FACT_SOURCES[source].needed(scope.wants)) {
      // The endpoint's activities changed since the checkpoint: not read, no checkpoint needed.
      cursor = nextSource(source, scope.wants);
      continue;
    }
    let next: BackfillCursor | null;
    if (source === "failed") {
      const step = await forgetFailed(ctx, { job, leaseId, scope, after, limit });
      if (step === false) return "lost";
      next = step;
    } else {
      const page = await FACT_SOURCES[source].read(ctx, scope, after, limit);
      const offered =
        page.facts.length > 0
          ? await offerFacts(ctx, { id: endpoint.id, actorFormat: endpoint.actorFormat }, page.facts)
          : { statements: 0 };
      next = page.rows < limit ? nextSource(source, scope.wants) : { source, after: page.last };
      const saved = await saveCheckpoint(ctx, {
        job,
        leaseId,
        cursor: next ?? { source, after: page.last },
        statements: offered.statements,
      });
      if (!saved) return "lost";
    }
    cursor = next;
    if (cursor && ctx.now() >= deadline) return "continue";
  }
  return (await markCompleted(ctx, { job, leaseId })) ? "completed" : "lost";
}

/**
 * A chunk of the endpoint's failed statements sent again (docs/design/xapi-forwarding.md: which
 * ones): forgotten, in one D1 batch with the checkpoint guarded on the lease, so that the fact
 * sources read after this one offer their facts again and they are built, stored and sent anew under
 * the same ids. Returns the cursor after the chunk (null: the last source is done), or false when the
 * lease was lost (nothing was written).
 */
async function forgetFailed(
  ctx: ServiceContext,
  input: { job: Backfill; leaseId: string; scope: SourceScope; after: string[] | null; limit: number },
): Promise<BackfillCursor | null | false> {
  const { job, leaseId, scope, after, limit } = input;
  const nowMs = ctx.now();
  const { results } = await ctx.d1
    .prepare(FAILED_STATEMENTS_SQL)
    .bind(
      job.endpointId,
      after?.[0] ?? null,
      after?.[1] ?? null,
      limit,
      scope.since,
      scope.until,
      JSON.stringify([...scope.wants]),
      scope.institutionId,
      nowIso(nowMs - EVENT_RETENTION_MS),
    )
    .all<FailedStatementRow>();
  const last = results.at(-1);
  const next: BackfillCursor | null =
    results.length < limit || !last
      ? nextSource("failed", scope.wants)
      : { source: "failed", after: [last.completed_at, last.id] };
  const d1 = ctx.d1;
  try {
    await commit(ctx, {
      statements: [
        d1.prepare(BACKFILL_HELD_GUARD).bind(job.id, leaseId, job.generation),
        ...(results.length > 0
          ? [FORGET_FAILED_ENTRIES_SQL, FORGET_FAILED_KEYS_SQL, FORGET_FAILED_SQL].map((forget) =>
              d1.prepare(forget).bind(JSON.stringify(results.map((r) => r.id)), job.endpointId),
            )
          : []),
        d1
          .prepare(FORGET_CHECKPOINT_SQL)
          .bind(
            job.id,
            leaseId,
            JSON.stringify(next ?? { source: "failed", after: last ? [last.completed_at, last.id] : null }),
            renewed(nowMs).leaseUntil,
            nowMs,
          ),
      ],
    });
  } catch (error) {
    if (isBatchGuardFailure(error)) return false;
    throw error;
  }
  return next;
}
