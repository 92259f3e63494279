import { eq } from "drizzle-orm";
import { xapiEndpoints } from "../../../db/schema";
import { chunk, isBatchGuardFailure } from "../../../platform/batch";
import { newId, nowIso } from "../../../platform/ids";
import { renewed } from "../../../platform/jobs/lease";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { offerFacts } from "../delivery/offer";
import { INSERT_BATCHES_SQL } from "../delivery/sql";
import { BATCH_SIZE, enqueueBatches } from "../delivery/target";
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
  BATCHES_MADE_SQL,
  FAILED_STATEMENTS_SQL,
  type FailedStatementRow,
  REQUEUE_CHECKPOINT_SQL,
  REQUEUE_FAILED_SQL,
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
 * a keyset page of one source, offered (facts) or re-queued (failed statements), then the
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
      const step = await requeueFailed(ctx, { job, leaseId, scope, after, limit });
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
 * ones): set back to `pending` in new batches of at most 50, the batches made and the checkpoint
 * written in one D1 batch guarded on the lease, then the batches queued. Returns the cursor after
 * the chunk (null: the last source is done), or false when the lease was lost (nothing was written).
 */
async function requeueFailed(
  ctx: ServiceContext,
  input: { job: Backfill; leaseId: string; scope: SourceScope; after: string[] | null; limit: number },
): Promise<BackfillCursor | null | false> {
  const { job, leaseId, scope, after, limit } = input;
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
    )
    .all<FailedStatementRow>();
  const last = results.at(-1);
  const next: BackfillCursor | null =
    results.length < limit || !last
      ? nextSource("failed", scope.wants)
      : { source: "failed", after: [last.completed_at, last.id] };
  const groups = chunk(results, BATCH_SIZE).map((group) => ({ id: newId("xbt"), group }));
  const pairs = groups.flatMap(({ id, group }) => group.map((s) => [s.id, id]));
  const batchIds = JSON.stringify(groups.map((g) => g.id));
  const nowMs = ctx.now();
  const d1 = ctx.d1;
  try {
    const { results: answers } = await commit(ctx, {
      statements: [
        d1.prepare(BACKFILL_HELD_GUARD).bind(job.id, leaseId, job.generation),
        ...(pairs.length > 0
          ? [
              d1.prepare(REQUEUE_FAILED_SQL).bind(JSON.stringify(pairs), job.endpointId),
              d1.prepare(INSERT_BATCHES_SQL).bind(batchIds, job.endpointId, nowIso(nowMs)),
            ]
          : []),
        d1
          .prepare(REQUEUE_CHECKPOINT_SQL)
          .bind(
            job.id,
            leaseId,
            JSON.stringify(next ?? { source: "failed", after: last ? [last.completed_at, last.id] : null }),
            batchIds,
            renewed(nowMs).leaseUntil,
            nowMs,
          ),
        d1.prepare(BATCHES_MADE_SQL).bind(batchIds),
      ],
    });
    // Only the batches that got a statement were made (a statement may have changed meanwhile).
    const made = ((answers.at(-1)?.results ?? []) as { id: string }[]).map((b) => b.id);
    if (made.length > 0) await enqueueBatches(ctx, made);
  } catch (error) {
    if (isBatchGuardFailure(error)) return false;
    throw error;
  }
  return next;
}
