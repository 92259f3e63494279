import type { ltiPassbacks } from "../../../db/schema";
import { nextRetrySeconds } from "../../../platform/outbound";
import type { ServiceContext } from "../../../platform/service/context";
import { LINE_ITEM_READ_SCOPES, SCORE_SCOPE } from "../claims";
import type { LaunchRow } from "../launch/launch-log";
import { type AttemptOutcome, getJson, postToPlatform } from "../outbound";
import type { ConsumerRow } from "../registrations/service";
import { accessToken, forgetAccessToken } from "./access-token";
import { agsScopes, lineItemOf, lineItemOfContext, scoresUrl } from "./line-item";

/**
 * One attempt at sending a score to the platform (LTI AGS): what the passback target of the delivery
 * engine sends, and what the manual grade sends inline. Writes nothing but the access-token cache.
 */

export type PassbackRow = typeof ltiPassbacks.$inferSelect;

export type PassbackResult =
  | { status: "succeeded"; outcome: AttemptOutcome }
  | { status: "retrying"; outcome: AttemptOutcome; retryInSeconds: number }
  | { status: "failed"; outcome: AttemptOutcome };

/** A passback to send (its attempt already counted by the claim), its launch and registration. */
export interface ScoreToSend {
  passback: PassbackRow;
  launch: LaunchRow;
  consumer: ConsumerRow;
}

/** The score as AGS wants it, the same on every retry (its timestamp was fixed when the passback was made). */
export function scoreBody(passback: PassbackRow, sub: string, maximum: number | null) {
  const fraction = passback.scoreFraction;
  const scoreMaximum = fraction !== null ? (maximum ?? 1) : passback.scoreMaximum;
  const scoreGiven =
    fraction !== null ? Math.round(fraction * (maximum ?? 1) * 10_000) / 10_000 : passback.scoreGiven;
  return {
    userId: sub,
    ...(scoreGiven !== null ? { scoreGiven } : {}),
    ...(scoreMaximum !== null ? { scoreMaximum } : {}),
    activityProgress: passback.activityProgress,
    gradingProgress: passback.gradingProgress,
    timestamp: passback.scoredAt,
    ...(passback.comment !== null ? { comment: passback.comment } : {}),
  };
}

/** An automatic score is scaled to the line item's `scoreMaximum` when the launch may read it; else out of 1. */
async function lineItemMaximum(
  ctx: ServiceContext,
  consumer: ConsumerRow,
  launch: LaunchRow,
): Promise<number | null> {
  const readScope = LINE_ITEM_READ_SCOPES.find((s) => agsScopes(launch).includes(s));
  if (!readScope) return null;
  const token = await accessToken(ctx, consumer, readScope);
  if (!("token" in token)) return null;
  const lineItem = lineItemOf(ctx.env, launch);
  if (!lineItem) return null;
  try {
    const item = (await getJson(ctx, lineItem, "application/vnd.ims.lis.v2.lineitem+json", {
      Authorization: `Bearer ${token.token}`,
    })) as { scoreMaximum?: unknown };
    return typeof item.scoreMaximum === "number" && item.scoreMaximum > 0 ? item.scoreMaximum : null;
  } catch {
    return null;
  }
}

/**
 * What an answer comes to: a 4xx is the platform saying no (429 and 408 excepted); 5xx, time-outs
 * and network errors are tried again on the one retry policy (platform/outbound/retry.ts), counted
 * from `ctx.now()`, with the webhooks' schedule.
 */
function judged(ctx: ServiceContext, passback: PassbackRow, outcome: AttemptOutcome): PassbackResult {
  if (outcome.ok) return { status: "succeeded", outcome };
  const refused = outcome.errorCode === "target_refused";
  const status = outcome.responseStatus;
  const rejected =
    refused || (status !== null && status >= 300 && status < 500 && status !== 408 && status !== 429);
  if (rejected) return { status: "failed", outcome };
  const delay = nextRetrySeconds(
    passback.attemptCount,
    ctx.config.webhooks.retrySchedule,
    outcome.retryAfter,
    ctx.now(),
  );
  return delay === null
    ? { status: "failed", outcome }
    : { status: "retrying", outcome, retryInSeconds: delay };
}

/** An attempt that ended before any request: the category and a sentence the log may show. */
function unsent(errorCode: AttemptOutcome["errorCode"], error: string): AttemptOutcome {
  return {
    ok: false,
    responseStatus: null,
    errorCode,
    error,
    responseBody: null,
    durationMs: 0,
    retryAfter: null,
  };
}

/**
 * One attempt at a passback (its attempt already counted by the claim): an access token (cached),
 * then the score POSTed to the line item's scores endpoint. A 401 of the scores endpoint drops the
 * cached token and tries once more with a fresh one (the platform revoked it early). Never throws:
 * a line item scores cannot go to fails the attempt for good (`target_refused`); anything else that
 * throws is a failed attempt retried on the usual schedule, logged but not shown to the customer.
 */
export async function sendScore(ctx: ServiceContext, score: ScoreToSend): Promise<PassbackResult> {
  const { passback, launch } = score;
  // A named line item is checked again as it is sent (a row is data; the rule may have tightened).
  const lineItem =
    passback.lineItemUrl !== null
      ? lineItemOfContext(ctx.env, launch, passback.lineItemUrl)
        ? passback.lineItemUrl
        : null
      : lineItemOf(ctx.env, launch);
  if (!lineItem)
    return judged(
      ctx,
      passback,
      unsent(
        "target_refused",
        "The launch's line item is not an http(s) URL scores can be sent to; not sent",
      ),
    );
  try {
    return await postScore(ctx, score, lineItem);
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "error",
        message: "passback attempt failed",
        passback_id: passback.id,
        error: String(error),
      }),
    );
    return judged(ctx, passback, unsent(null, "Internal error while sending the score; it will be retried"));
  }
}

async function postScore(
  ctx: ServiceContext,
  { passback, launch, consumer }: ScoreToSend,
  lineItem: string,
): Promise<PassbackResult> {
  const maximum = passback.scoreFraction !== null ? await lineItemMaximum(ctx, consumer, launch) : null;
  const body = JSON.stringify(scoreBody(passback, launch.sub as string, maximum));
  const target = scoresUrl(lineItem);
  for (let round = 0; round < 2; round++) {
    const token = await accessToken(ctx, consumer, SCORE_SCOPE);
    if (!("token" in token)) return judged(ctx, passback, token.failure);
    const outcome = await postToPlatform(
      ctx,
      target,
      {
        "Content-Type": "application/vnd.ims.lis.v1.score+json",
        Authorization: `Bearer ${token.token}`,
        Accept: "application/json",
      },
      body,
    );
    if (outcome.responseStatus === 401 && round === 0) {
      await forgetAccessToken(ctx, consumer, SCORE_SCOPE, token);
      continue;
    }
    return judged(ctx, passback, outcome);
  }
  throw new Error("unreachable");
}
