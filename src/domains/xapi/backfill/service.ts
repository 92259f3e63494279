import { and, desc, eq } from "drizzle-orm";
import { xapiBackfills } from "../../../db/schema";
import { ApiError, validationError } from "../../../platform/errors";
import { type PageRequest, pageBounds, pageWithTotal } from "../../../platform/http/pagination";
import { newId, nowIso } from "../../../platform/ids";
import { awaitingMessage } from "../../../platform/jobs/lease";
import type { ServiceContext } from "../../../platform/service/context";
import { type EndpointRow, findEndpoint } from "../service";
import { type Backfill, enqueueBackfill, isActive } from "./jobs";
import { BACKFILL_WINDOW_DAYS, type CreateBackfillInput } from "./schemas";
import { START_BACKFILL_SQL } from "./sql";

const DAY_MS = 86_400_000;

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

/** `since` as stored (UTC, to the second), or the field's problem: within the window, not ahead of now. */
function checkSince(since: string, now: number): string {
  const ms = Date.parse(since);
  if (ms > now) throw validationError([{ path: "since", message: "must not be in the future" }]);
  if (ms < now - BACKFILL_WINDOW_DAYS * DAY_MS)
    throw validationError([
      { path: "since", message: `must be within the last ${BACKFILL_WINDOW_DAYS} days` },
    ]);
  return nowIso(ms);
}

/**
 * Starts a back-fill of the endpoint from `since` to now: one conditional INSERT, which only an
 * enabled endpoint of the caller's institution without an active back-fill passes (the partial
 * unique index makes two concurrent starts one), then its first message. When the send fails the
 * back-fill waits for the minute sweep, which sends it once its first message is overdue.
 */
export async function startBackfill(
  ctx: ServiceContext,
  input: { institutionId: string; endpointId: string; userId: string; body: CreateBackfillInput },
): Promise<Backfill> {
  const endpoint = await findEndpoint(ctx, { institutionId: input.institutionId, id: input.endpointId });
  const now = ctx.now();
  const since = checkSince(input.body.since, now);
  if (!endpoint.enabled) throw disabled(endpoint);
  const id = newId("xbf");
  const until = nowIso(now);
  const { results } = await ctx.d1
    .prepare(START_BACKFILL_SQL)
    .bind(
      id,
      endpoint.id,
      input.institutionId,
      since,
      until,
      awaitingMessage(now).leaseUntil,
      now,
      input.userId,
    )
    .all<{ id: string }>();
  if (results.length === 0) {
    const again = await findEndpoint(ctx, { institutionId: input.institutionId, id: input.endpointId });
    if (!again.enabled) throw disabled(again);
    const active = await activeBackfill(ctx, endpoint.id);
    const which = active
      ? `Back-fill ${active.id} of this endpoint is still ${active.status}`
      : "Another back-fill of this endpoint is in progress";
    throw new ApiError(
      "xapi_backfill_in_progress",
      `${which}; watch it until it is completed or failed, then start another if you still need one.`,
      { extensions: { backfill_id: active?.id ?? null } },
    );
  }
  try {
    await enqueueBackfill(ctx, { backfill_id: id, generation: 0 });
  } catch (error) {
    log("warn", "xAPI back-fill enqueue failed; the sweep will send it", {
      backfill_id: id,
      error: String(error),
    });
  }
  return getBackfill(ctx, { endpointId: endpoint.id, id });
}

function disabled(endpoint: EndpointRow): ApiError {
  return new ApiError(
    "xapi_endpoint_disabled",
    `xAPI endpoint ${endpoint.id} is disabled: enable it (PUT with "enabled": true) before back-filling it.`,
  );
}

async function activeBackfill(ctx: ServiceContext, endpointId: string): Promise<Backfill | null> {
  return (
    (await ctx.db
      .select()
      .from(xapiBackfills)
      .where(and(eq(xapiBackfills.endpointId, endpointId), isActive()))
      .get()) ?? null
  );
}

/** One back-fill of the endpoint (already in the caller's scope), or 404. */
export async function getBackfill(
  ctx: ServiceContext,
  { endpointId, id }: { endpointId: string; id: string },
): Promise<Backfill> {
  const row = await ctx.db
    .select()
    .from(xapiBackfills)
    .where(and(eq(xapiBackfills.id, id), eq(xapiBackfills.endpointId, endpointId)))
    .get();
  if (!row) throw new ApiError("not_found", `No back-fill ${id} of this endpoint.`);
  return row;
}

/** A page of the endpoint's back-fills, newest first (ties by id). */
export async function listBackfills(
  ctx: ServiceContext,
  { endpointId, page }: { endpointId: string; page: PageRequest },
) {
  const { limit, offset } = pageBounds(page);
  const where = eq(xapiBackfills.endpointId, endpointId);
  const query = ctx.db
    .select()
    .from(xapiBackfills)
    .where(where)
    .orderBy(desc(xapiBackfills.createdAt), desc(xapiBackfills.id))
    .limit(limit)
    .offset(offset);
  return pageWithTotal(ctx.db, query, xapiBackfills, where);
}
