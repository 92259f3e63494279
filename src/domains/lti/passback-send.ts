import type { ltiPassbacks } from "../../db/schema";
import type { Env } from "../../env";
import { outboundPolicy, urlProblem } from "../../platform/outbound";
import { LINE_ITEM_READ_SCOPES, SCORE_SCOPE } from "./claims";
import type { LaunchRow } from "./launch/launch-log";
import { type AttemptOutcome, getJson, postToPlatform, retryInSeconds } from "./outbound";
import { accessToken, forgetAccessToken } from "./platform-token";
import type { ConsumerRow } from "./registrations/service";

export type PassbackRow = typeof ltiPassbacks.$inferSelect;

export type PassbackResult =
  | { status: "succeeded"; outcome: AttemptOutcome }
  | { status: "retrying"; outcome: AttemptOutcome; retryInSeconds: number }
  | { status: "failed"; outcome: AttemptOutcome };

/** The line item's scores endpoint: `/scores` appended to its path, before any query string. */
export function scoresUrl(lineItem: string): string {
  const url = new URL(lineItem);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/scores`;
  return url.toString();
}

/**
 * A line item URL scores may go to: an absolute http(s) URL that the outbound gate's text rules admit
 * (the same as a registration's URLs; the gate checks it again before each request). Else null.
 */
export function usableLineItem(env: Env, value: unknown): string | null {
  return typeof value === "string" && urlProblem(value, outboundPolicy(env)) === null ? value : null;
}

/** The launch's line item URL, or null when it has none scores may go to (the launch is not gradable). */
export function lineItemOf(env: Env, launch: LaunchRow): string | null {
  return usableLineItem(env, launch.ags?.lineitem);
}

export function agsScopes(launch: LaunchRow): string[] {
  const scope = launch.ags?.scope;
  return Array.isArray(scope) ? scope.filter((s): s is string => typeof s === "string") : [];
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
async function lineItemMaximum(env: Env, consumer: ConsumerRow, launch: LaunchRow): Promise<number | null> {
  const readScope = LINE_ITEM_READ_SCOPES.find((s) => agsScopes(launch).includes(s));
  if (!readScope) return null;
  const token = await accessToken(env, consumer, readScope);
  if (!("token" in token)) return null;
  const lineItem = lineItemOf(env, launch);
  if (!lineItem) return null;
  try {
    const item = (await getJson(env, lineItem, "application/vnd.ims.lis.v2.lineitem+json", {
      Authorization: `Bearer ${token.token}`,
    })) as { scoreMaximum?: unknown };
    return typeof item.scoreMaximum === "number" && item.scoreMaximum > 0 ? item.scoreMaximum : null;
  } catch {
    return null;
  }
}

function judged(env: Env, passback: PassbackRow, outcome: AttemptOutcome): PassbackResult {
  if (outcome.ok) return { status: "succeeded", outcome };
  const refused = outcome.errorCode === "target_refused";
  const status = outcome.responseStatus;
  // A 4xx is the platform saying no (429 and 408 excepted); 5xx, time-outs and network errors are tried again.
  const rejected =
    refused || (status !== null && status >= 300 && status < 500 && status !== 408 && status !== 429);
  if (rejected) return { status: "failed", outcome };
  const delay = retryInSeconds(env, passback.attemptCount, outcome.retryAfter);
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
export async function attemptPassback(
  env: Env,
  passback: PassbackRow,
  launch: LaunchRow,
  consumer: ConsumerRow,
): Promise<PassbackResult> {
  const lineItem = lineItemOf(env, launch);
  if (!lineItem)
    return judged(
      env,
      passback,
      unsent(
        "target_refused",
        "The launch's line item is not an http(s) URL scores can be sent to; not sent",
      ),
    );
  try {
    return await sendScore(env, passback, launch, consumer, lineItem);
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "error",
        message: "passback attempt failed",
        passback_id: passback.id,
        error: String(error),
      }),
    );
    return judged(env, passback, unsent(null, "Internal error while sending the score; it will be retried"));
  }
}

async function sendScore(
  env: Env,
  passback: PassbackRow,
  launch: LaunchRow,
  consumer: ConsumerRow,
  lineItem: string,
): Promise<PassbackResult> {
  const maximum = passback.scoreFraction !== null ? await lineItemMaximum(env, consumer, launch) : null;
  const body = JSON.stringify(scoreBody(passback, launch.sub as string, maximum));
  const target = scoresUrl(lineItem);
  for (let round = 0; round < 2; round++) {
    const token = await accessToken(env, consumer, SCORE_SCOPE);
    if (!("token" in token)) return judged(env, passback, token.failure);
    const outcome = await postToPlatform(
      env,
      target,
      {
        "Content-Type": "application/vnd.ims.lis.v1.score+json",
        Authorization: `Bearer ${token.token}`,
        Accept: "application/json",
      },
      body,
    );
    if (outcome.responseStatus === 401 && round === 0) {
      await forgetAccessToken(env, consumer.id, SCORE_SCOPE);
      continue;
    }
    return judged(env, passback, outcome);
  }
  throw new Error("unreachable");
}
