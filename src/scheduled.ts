import { reconcileSubscriptions } from "./domains/billing/reconcile";
import { sweepExports } from "./domains/exports/sweep";
import { requeueStalledPassbacks } from "./domains/lti/grades/sweep";
import { sweepLti } from "./domains/lti/launch/sweep";
import { sweepRosterSyncs } from "./domains/lti/roster/sweep";
import { sweepBulkJobs } from "./domains/members/bulk/sweep";
import { archiveOldAttempts } from "./domains/progress/cold-tier/archive";
import { purgePastWeeks } from "./domains/progress/sweep";
import { sweepSso } from "./domains/sso/sweep";
import { purgeOldEvents, requeueStalledDeliveries } from "./domains/webhooks/sweep";
import { sweepBackfills } from "./domains/xapi/backfill/sweep";
import {
  notifyFailingEndpoints,
  purgeOldXapiStatements,
  requeueStalledXapiBatches,
} from "./domains/xapi/delivery/sweep";
import type { Env } from "./env";
import { purgeExpiredIdempotencyKeys } from "./platform/http/idempotency";
import { sweepMoves } from "./platform/move/consumer";
import { requeueUndispatchedEvents } from "./platform/outbox-sweep";
import { backgroundContext, type ServiceContext } from "./platform/service/context";
import { databaseBindings } from "./platform/service/databases";
import { sweepOrphanKeys } from "./platform/service/orphan-keys";

type Sweep = (ctx: ServiceContext) => Promise<unknown>;

/** The minute cron's sweeps; each is independent, so one failing does not stop the others. */
const SWEEPS: { name: string; run: Sweep }[] = [
  { name: "idempotency-keys", run: purgeExpiredIdempotencyKeys },
  { name: "undispatched-events", run: requeueUndispatchedEvents },
  { name: "stalled-deliveries", run: requeueStalledDeliveries },
  { name: "old-events", run: purgeOldEvents },
  { name: "exports", run: sweepExports },
  { name: "bulk-uploads", run: sweepBulkJobs },
  { name: "past-weeks", run: purgePastWeeks },
  // Attempts past ATTEMPTS_HOT_DAYS to R2, a bounded number of files a run (docs/design/cold-tier.md).
  { name: "cold-tier", run: archiveOldAttempts },
  { name: "lti", run: sweepLti },
  { name: "sso", run: sweepSso },
  { name: "lti-passbacks", run: requeueStalledPassbacks },
  { name: "xapi-batches", run: requeueStalledXapiBatches },
  { name: "xapi-failing-endpoints", run: notifyFailingEndpoints },
  { name: "xapi-retention", run: purgeOldXapiStatements },
  { name: "lti-roster-syncs", run: sweepRosterSyncs },
  { name: "xapi-backfills", run: sweepBackfills },
  // Directory keys leading to nothing, past their grace period; a page a run, in DB's run only.
  { name: "orphan-keys", run: sweepOrphanKeys },
  { name: "institution-moves", run: sweepMoves },
  // Daily from 03:17 UTC (a share each minute until done): every paying institution against Stripe.
  { name: "billing-reconciliation", run: reconcileSubscriptions },
];

/** One cron run: every sweep, on a context whose clock reads the run's scheduled time. */
export async function runSweeps(
  env: Env,
  execution: Pick<ExecutionContext, "waitUntil">,
  scheduledTime = Date.now(),
): Promise<void> {
  // Every database is a whole one (design/multi-database.md): each sweep runs once in each.
  await Promise.all(
    databaseBindings(env).map(async (name) => {
      const ctx = backgroundContext(env, execution, "cron", () => scheduledTime, name);
      const results = await Promise.allSettled(SWEEPS.map((sweep) => sweep.run(ctx)));
      SWEEPS.forEach((sweep, i) => {
        const result = results[i];
        if (result?.status === "rejected") {
          console.error(
            JSON.stringify({
              level: "error",
              message: "sweep failed",
              sweep: sweep.name,
              database: name,
              error: String(result.reason),
            }),
          );
        }
      });
    }),
  );
}
