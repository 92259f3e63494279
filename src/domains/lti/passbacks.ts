import type { z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { ltiConsumers, ltiPassbacks } from "../../db/schema";
import type { Env } from "../../env";
import { database } from "../../platform/db";
import { retryDelay } from "../../platform/delivery";
import { ApiError } from "../../platform/errors";
import { newId, nowIso } from "../../platform/ids";
import { SCORE_SCOPE } from "./claims";
import type { ConsumerRow } from "./consumers";
import { findLaunch, type LaunchRow } from "./launches";
import {
  agsScopes,
  attemptPassback,
  lineItemOf,
  type PassbackResult,
  type PassbackRow,
} from "./passback-send";
import { CLAIM_MS, enqueuePassbacks, resultStatement } from "./passback-target";

export type { PassbackRow };

import type { PassbackBody, PassbackSchema } from "./schemas";

export function presentPassback(row: PassbackRow): z.infer<typeof PassbackSchema> {
  return {
    id: row.id,
    launch_id: row.launchId,
    source: row.eventId ? "automatic" : "manual",
    event_id: row.eventId,
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

export async function passbacksOf(env: Env, launchId: string): Promise<PassbackRow[]> {
  return database(env.DB)
    .select()
    .from(ltiPassbacks)
    .where(eq(ltiPassbacks.launchId, launchId))
    .orderBy(desc(ltiPassbacks.createdAt), desc(ltiPassbacks.id));
}

/** Whether grades can go back for a launch: it carries a usable AGS line item URL and the score scope. */
export function isGradable(env: Env, launch: LaunchRow): boolean {
  return (
    launch.status === "succeeded" &&
    lineItemOf(env, launch) !== null &&
    agsScopes(launch).includes(SCORE_SCOPE)
  );
}

/**
 * Records the manual grade's inline attempt, only while it still holds the passback; a retry goes to
 * the passback queue as a delayed message, where the delivery engine takes it over.
 */
export async function recordResult(env: Env, row: PassbackRow, result: PassbackResult): Promise<PassbackRow> {
  const [updated] = await resultStatement(database(env.DB), row, result, Date.now()).returning();
  if (result.status === "retrying")
    await enqueuePassbacks(env, [row.id], [retryDelay(result.retryInSeconds)]);
  return updated ?? row;
}

async function consumerOf(env: Env, launch: LaunchRow): Promise<ConsumerRow> {
  const consumer = launch.consumerId
    ? await database(env.DB).select().from(ltiConsumers).where(eq(ltiConsumers.id, launch.consumerId)).get()
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
  env: Env,
  institutionId: string,
  launchId: string,
  input: z.infer<typeof PassbackBody>,
): Promise<{ row: PassbackRow; result: PassbackResult }> {
  const launch = await findLaunch(env, institutionId, launchId);
  if (!isGradable(env, launch))
    throw new ApiError(
      "lti_not_gradable",
      "This launch carries no usable AGS line item (an http(s) URL) with the score scope; the platform must send the assignment-and-grade claim (a graded assignment) for grades to go back.",
    );
  const consumer = await consumerOf(env, launch);
  const now = Date.now();
  const row: PassbackRow = {
    id: newId("lpb"),
    launchId: launch.id,
    institutionId,
    eventId: null,
    scoreGiven: input.score_given,
    scoreMaximum: input.score_maximum,
    scoreFraction: null,
    activityProgress: input.activity_progress,
    gradingProgress: input.grading_progress,
    comment: input.comment ?? null,
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
  await database(env.DB).insert(ltiPassbacks).values(row).run();
  const result = await attemptPassback(env, row, launch, consumer);
  return { row: await recordResult(env, row, result), result };
}
