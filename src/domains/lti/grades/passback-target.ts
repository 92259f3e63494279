import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { ltiConsumers, ltiLaunches, ltiPassbacks } from "../../../db/schema";
import type { Statement } from "../../../platform/batch";
import { type Database, inJsonList } from "../../../platform/db";
import {
  type Closed,
  type DeliveryTarget,
  enqueue,
  PARALLEL_SENDS,
  type WorkState,
} from "../../../platform/delivery";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { RESPONSE_BODY_LIMIT } from "../outbound";
import { type PassbackResult, type PassbackRow, type ScoreToSend, sendScore } from "./send-score";

/**
 * LTI grade passback as a target of the delivery engine (platform/delivery): a passback row, read
 * with its launch and platform registration once per batch, sent as an AGS score with an access
 * token (send-score.ts), recorded on its row.
 */

/** A message of the passback queue: one passback to attempt. */
export const PassbackMessage = z.object({ passback_id: z.string().min(1) });
export type PassbackMessage = z.infer<typeof PassbackMessage>;

/** How long one attempt may hold a passback before a twin message may try it. */
export const CLAIM_MS = 60_000;
/** An attempt may take an access token, a line item and a score POST retried once: four requests. */
const REQUESTS_PER_ATTEMPT = 4;

export interface PassbackItem extends ScoreToSend {
  id: string;
}

/** The row's state after an attempt: what the log shows and what the queue does next. */
export function resultChanges(result: PassbackResult, now: number): Partial<PassbackRow> {
  const { outcome } = result;
  return {
    status: result.status,
    claimedUntil: null,
    platformStatus: outcome.responseStatus,
    lastError: outcome.error,
    responseBody: outcome.responseBody?.slice(0, RESPONSE_BODY_LIMIT) ?? null,
    nextAttemptAt: result.status === "retrying" ? now + result.retryInSeconds * 1000 : null,
    sentAt: result.status === "succeeded" ? nowIso(now) : null,
    completedAt: result.status === "retrying" ? null : nowIso(now),
  };
}

/** Records an attempt's result, only while this attempt still holds the passback. */
export function resultStatement(db: Database, row: PassbackRow, result: PassbackResult, now: number) {
  return db
    .update(ltiPassbacks)
    .set(resultChanges(result, now))
    .where(and(eq(ltiPassbacks.id, row.id), eq(ltiPassbacks.attemptCount, row.attemptCount)));
}

/** A claimed passback whose platform registration was deleted: closed unsent. */
function closeUnsent(db: Database, id: string, now: number): Statement {
  return db
    .update(ltiPassbacks)
    .set({
      status: "failed",
      claimedUntil: null,
      lastError: "The platform registration was deleted; not sent",
      completedAt: nowIso(now),
    })
    .where(eq(ltiPassbacks.id, id));
}

export const passbackTarget: DeliveryTarget<PassbackMessage, WorkState, PassbackItem, PassbackResult> = {
  name: "lti-passback",
  table: "lti_passbacks",
  message: {
    schema: PassbackMessage,
    idOf: (body) => body.passback_id,
    of: (id) => ({ passback_id: id }),
  },
  queue: (env) => env.LTI_PASSBACK_QUEUE,
  deadLetter: (env) => env.LTI_PASSBACK_DLQ,
  deadLetteredError: "Dead-lettered: the passback queue gave up on this message",
  leaseMs: (ctx, count) =>
    Math.max(
      CLAIM_MS,
      (Math.ceil(count / PARALLEL_SENDS) + 1) * REQUESTS_PER_ATTEMPT * ctx.config.webhooks.timeoutMs + 30_000,
    ),
  // The rows of the batch's claimed passbacks, read after the claim (so counting this attempt), with
  // their launches and registrations: one query for the batch.
  async prepare(ctx, claimed, now) {
    const found = await ctx.db
      .select({ passback: ltiPassbacks, launch: ltiLaunches, consumer: ltiConsumers })
      .from(ltiPassbacks)
      .leftJoin(ltiLaunches, eq(ltiLaunches.id, ltiPassbacks.launchId))
      .leftJoin(ltiConsumers, eq(ltiConsumers.id, ltiLaunches.consumerId))
      .where(
        inJsonList(
          ltiPassbacks.id,
          claimed.map((c) => c.row.id),
        ),
      );
    const byId = new Map(found.map((f) => [f.passback.id, f]));
    const send: PassbackItem[] = [];
    const close: Closed[] = [];
    for (const { row, attempt } of claimed) {
      const f = byId.get(row.id);
      if (f?.launch && f.consumer)
        send.push({
          id: row.id,
          passback: { ...f.passback, attemptCount: attempt },
          launch: f.launch,
          consumer: f.consumer,
        });
      else close.push({ id: row.id, statements: [closeUnsent(ctx.db, row.id, now)] });
    }
    return { send, close };
  },
  send: (ctx, item) => sendScore(ctx, item),
  record: (ctx, attempts, now) =>
    attempts.map(({ item, result }) => resultStatement(ctx.db, item.passback, result, now)),
};

/** One passback-queue message per id; `delaySeconds[i]`, when given, delays the i-th. */
export function enqueuePassbacks(
  ctx: ServiceContext,
  ids: readonly string[],
  delaySeconds?: readonly number[],
) {
  return enqueue(ctx, passbackTarget, ids, delaySeconds);
}
