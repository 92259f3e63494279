import { sweepExports } from "./domains/exports/sweep";
import { sweepLti } from "./domains/lti/sweep";
import { purgePastWeeks } from "./domains/progress/sweep";
import { purgeOldEvents, requeueStalledDeliveries } from "./domains/webhooks/sweep";
import type { Env } from "./env";
import { resealLegacyValues } from "./platform/crypto/sealed-values";
import { purgeExpiredIdempotencyKeys } from "./platform/http/idempotency";
import { requeueUndispatchedEvents } from "./platform/outbox-sweep";

/** The minute cron's sweeps; each is independent, so one failing does not stop the others. */
const SWEEPS: { name: string; run: (env: Env, now: number) => Promise<unknown> }[] = [
  { name: "idempotency-keys", run: (env) => purgeExpiredIdempotencyKeys(env.DB) },
  { name: "undispatched-events", run: requeueUndispatchedEvents },
  { name: "stalled-deliveries", run: requeueStalledDeliveries },
  { name: "old-events", run: purgeOldEvents },
  { name: "exports", run: sweepExports },
  { name: "past-weeks", run: purgePastWeeks },
  { name: "lti", run: sweepLti },
  { name: "reseal-legacy-values", run: resealLegacyValues },
];

export async function runSweeps(env: Env, now = Date.now()): Promise<void> {
  const results = await Promise.allSettled(SWEEPS.map((sweep) => sweep.run(env, now)));
  SWEEPS.forEach((sweep, i) => {
    const result = results[i];
    if (result?.status === "rejected") {
      console.error(
        JSON.stringify({
          level: "error",
          message: "sweep failed",
          sweep: sweep.name,
          error: String(result.reason),
        }),
      );
    }
  });
}
