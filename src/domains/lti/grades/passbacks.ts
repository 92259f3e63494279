import type { z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { ltiConsumers, ltiPassbacks } from "../../../db/schema";
import { retryDelay } from "../../../platform/delivery";
import { ApiError, validationError } from "../../../platform/errors";
import { newId, nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { SCORE_SCOPE } from "../claims";
import { findLaunch, type LaunchRow } from "../launch/launch-log";
import type { ConsumerRow } from "../registrations/service";
import { agsScopes, isGradable, lineItemOf, lineItemOfContext, lineItemsOf } from "./line-item";
import type { PassbackBody, PassbackSchema } from "./passback-schemas";
import { CLAIM_MS, enqueuePassbacks, resultStatement } from "./passback-target";
import { type PassbackResult, type PassbackRow, sendScore } from "./send-score";

export type { PassbackRow };

/** A passback as the API shows it. */
export function presentPassback(row: PassbackRow): z.infer<typeof PassbackSchema> {
  return {
    id: row.id,
    launch_id: row.launchId,
    source: row.eventId ? "automatic" : "manual",
    event_id: row.eventId,
    line_item_url: row.lineItemUrl,
    status: row.status,
    score_given: row.scoreGiven,
    score_maximum: row.scoreMaximum,
    activity_progress: row.activityProgress as z.infer<typeof PassbackSchema>["activity_progress"],
    grading_progress: row.gradingProgress as z.infer<typeof PassbackSchema>["grading_progress"],
    comment: row.comment,
    timestamp: row.scoredAt,
    attempt_count: row.attemptCount,
    platform_status: row.platformStatus,
    last_error: row.lastError,
    sent_at: row.sentAt,
    created_at: row.createdAt,
  };
}

/** The passbacks of a launch, newest first (the launch log shows them). */
export async function passbacksOf(ctx: ServiceContext, launchId: string): Promise<PassbackRow[]> {
  return ctx.db
    .select()
    .from(ltiPassbacks)
    .where(eq(ltiPassbacks.launchId, launchId))
    .orderBy(desc(ltiPassbacks.createdAt), desc(ltiPassbacks.id));
}

/**
 * Records the manual grade's inline attempt, only while it still holds the passback; a retry goes to
 * the passback queue as a delayed message, where the delivery engine takes it over.
 */
async function recordResult(
  ctx: ServiceContext,
  row: PassbackRow,
  result: PassbackResult,
): Promise<PassbackRow> {
  const [updated] = await resultStatement(ctx.db, row, result, ctx.now()).returning();
  if (result.status === "retrying")
    await enqueuePassbacks(ctx, [row.id], [retryDelay(result.retryInSeconds)]);
  return updated ?? row;
}

async function consumerOf(ctx: ServiceContext, launch: LaunchRow): Promise<ConsumerRow> {
  const consumer = launch.consumerId
    ? await ctx.db.select().from(ltiConsumers).where(eq(ltiConsumers.id, launch.consumerId)).get()
    : undefined;
  if (!consumer)
    throw new ApiError("lti_not_gradable", "The platform registration of this launch was deleted.");
  return consumer;
}

/**
 * A score for a launch, sent at once: 200 when the platform took it, 202 while retrying through the
 * queue, 502 (with the platform's status and answer) when it refused.
 */
export async function gradeLaunch(
  ctx: ServiceContext,
  {
    institutionId,
    launchId,
    score,
  }: { institutionId: string; launchId: string; score: z.infer<typeof PassbackBody> },
): Promise<{ row: PassbackRow; result: PassbackResult }> {
  const launch = await findLaunch(ctx, institutionId, launchId);
  const lineItemUrl = score.line_item_url ?? null;
  if (lineItemUrl === null && !isGradable(ctx.env, launch))
    throw new ApiError(
      "lti_not_gradable",
      "This launch carries no usable AGS line item (an http(s) URL) with the score scope; the platform must send the assignment-and-grade claim (a graded assignment) for grades to go back.",
    );
  if (lineItemUrl !== null) {
    const ownItem = lineItemOf(ctx.env, launch) === lineItemUrl;
    if (!agsScopes(launch).includes(SCORE_SCOPE) || (!ownItem && !lineItemsOf(ctx.env, launch)))
      throw new ApiError(
        "lti_not_gradable",
        "This launch carries no usable AGS line items URL with the score scope, so no line item of its context can take a grade; the platform must send the assignment-and-grade claim.",
      );
    if (!lineItemOfContext(ctx.env, launch, lineItemUrl))
      throw validationError([
        {
          path: "line_item_url",
          message:
            "must be a line item of the launch's context: the launch's lineitem, or a URL below its lineitems URL on the same origin (as GET …/line-items lists them)",
        },
      ]);
  }
  const consumer = await consumerOf(ctx, launch);
  const now = ctx.now();
  const row: PassbackRow = {
    id: newId("lpb"),
    launchId: launch.id,
    institutionId,
    eventId: null,
    lineItemUrl,
    scoreGiven: score.score_given,
    scoreMaximum: score.score_maximum,
    scoreFraction: null,
    activityProgress: score.activity_progress,
    gradingProgress: score.grading_progress,
    comment: score.comment ?? null,
    scoredAt: new Date(now).toISOString(),
    status: "pending",
    // Inserted already claimed, its first attempt counted, as the queue consumer's claim would.
    attemptCount: 1,
    nextAttemptAt: null,
    claimedUntil: now + CLAIM_MS,
    platformStatus: null,
    lastError: null,
    responseBody: null,
    createdAt: nowIso(now),
    sentAt: null,
    completedAt: null,
  };
  await ctx.db.insert(ltiPassbacks).values(row).run();
  const result = await sendScore(ctx, { passback: row, launch, consumer });
  return { row: await recordResult(ctx, row, result), result };
}
