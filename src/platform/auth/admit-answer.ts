import type { LeasePolicy } from "../ratelimit/lease-terms";
import type { RateDecision } from "../ratelimit/window";
import type { Principal } from "./principal";

/**
 * What `TokenGate.admit` decides for one request. `version` identifies the cached principal; the
 * principal itself is sent only when the caller's copy is stale. A refusal names its `policy` when
 * it is the institution's budget or the user's share of it, not the token's own limit.
 */
export type AdmitResult =
  | {
      outcome: "admitted";
      version: number;
      principal?: Principal;
      rate: RateDecision;
      touch: boolean;
      /** Set when `rate` is the user's share of the institution's budget rather than the token's limit. */
      policy?: LeasePolicy;
    }
  | { outcome: "rate_limited"; rate: RateDecision; policy?: LeasePolicy }
  | { outcome: "unauthenticated"; reason: "unknown" | "revoked" | "expired" };

/**
 * The answer as it crosses the RPC boundary. Nearly every request is admitted with a principal the
 * caller already holds, and a caller that asks for the "compact" format gets that answer as one short
 * string: structured-cloning the nested result object cost 5–8 % of `GET /api/auth/me`'s CPU per
 * request at concurrency 16 (workerd under Miniflare, 2026-11-22). Every other outcome is rare and
 * travels as the object.
 *
 * The caller asks, rather than the object deciding, because a deployment runs old and new code side
 * by side: a new worker may call an object still on the old code (which ignores the third argument
 * and answers an object, which `decodeAdmitAnswer` reads), and an old worker may call an object on the new
 * code (which then keeps answering objects, the only format that worker reads).
 */
export type AdmitAnswer = AdmitResult | string;
export type AdmitAnswerFormat = "object" | "compact";

/**
 * For an admitted request (`rate.allowed`) whose caller holds the current version:
 * "limit remaining reset window touch". Workers on an earlier version read this layout too, so a
 * different layout needs a new format name, not a change to this one.
 */
export function encodeAdmittedCurrent(rate: RateDecision, touch: boolean): string {
  return `${rate.limit} ${rate.remaining} ${rate.resetSeconds} ${rate.windowSeconds} ${touch ? 1 : 0}`;
}

/** The result an answer stands for; `knownVersion` is the version the caller sent. */
export function decodeAdmitAnswer(answer: AdmitAnswer, knownVersion: number | undefined): AdmitResult {
  if (typeof answer !== "string") return answer;
  if (knownVersion === undefined)
    throw new Error("TokenGate answered for a principal copy the caller does not hold");
  const fields = answer.split(" ").map(Number);
  if (fields.length !== 5 || !fields.every(Number.isFinite))
    throw new Error(`TokenGate sent a compact answer this worker cannot read: ${answer}`);
  const [limit, remaining, resetSeconds, windowSeconds, touch] = fields as [
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    outcome: "admitted",
    version: knownVersion,
    rate: { allowed: true, limit, remaining, resetSeconds, retryAfterSeconds: 0, windowSeconds },
    touch: touch === 1,
  };
}
