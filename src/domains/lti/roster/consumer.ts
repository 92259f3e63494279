import { eq } from "drizzle-orm";
import { ltiConsumers, ltiLaunches } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import { type JobRunOutcome, leasedJobConsumer } from "../../../platform/jobs/consumer";
import type { ServiceContext } from "../../../platform/service/context";
import { readRoster } from "./nrps";
import { noCounts, provisionRoster } from "./provision";
import {
  claimSync,
  enqueueRosterSync,
  failSync,
  findSync,
  finishSync,
  LEASE,
  type RosterMessage,
  RosterMessageSchema,
  type RosterSync,
  releaseSync,
  renewSync,
} from "./syncs";

/**
 * The roster-sync queue (`lingua-lti-roster`, max_batch_size 1), on the leased-job consumer
 * (platform/jobs/consumer.ts): a message names a sync and its
 * generation; the invocation claims it under a lease, reads the roster again from the platform and
 * provisions it chunk by chunk, renewing the lease before each. Provisioning is idempotent (the
 * (registration, sub) link decides), so a sync taken over after a lost invocation starts again from
 * the first member and finds those done linked already. A platform that fails is retried with
 * backoff (the queue's retries); one that refuses, or a launch or registration gone, fails the sync.
 */

const GAVE_UP = "The roster could not be synced: it failed on every attempt. Start the sync again.";

class LeaseLost extends Error {}

const rosterQueue = leasedJobConsumer<RosterMessage, RosterSync>({
  queue: "lingua-lti-roster",
  noun: "roster sync",
  idField: "sync_id",
  schema: RosterMessageSchema,
  jobId: (message) => message.sync_id,
  deadLetterQueue: (ctx) => ctx.env.LTI_ROSTER_DLQ,
  lease: LEASE,
  claim: (ctx, message, leaseId) => claimSync(ctx, { message, leaseId }),
  find: findSync,
  isActive: (sync) => sync.status === "queued" || sync.status === "processing",
  run: syncRoster,
  // A sync is never handed over: it runs to its end in one invocation.
  enqueue: (ctx, syncId, generation) => enqueueRosterSync(ctx, { sync_id: syncId, generation }),
  isLeaseLost: (error) => error instanceof LeaseLost,
  release: (ctx, sync, leaseId, retryInMs) => releaseSync(ctx, { id: sync.id, leaseId, retryInMs }),
  async giveUp(ctx, sync) {
    await failSync(ctx, { id: sync.id, generation: sync.generation, reason: GAVE_UP });
  },
});

export const consumeRosterSyncs = rosterQueue.consume;
export const deadLetterRosterSyncs = rosterQueue.consumeDeadLetters;

async function syncRoster(
  ctx: ServiceContext,
  sync: RosterSync,
  leaseId: string,
): Promise<JobRunOutcome<RosterSync>> {
  const counts = noCounts();
  try {
    const launch = await ctx.db.select().from(ltiLaunches).where(eq(ltiLaunches.id, sync.launchId)).get();
    const consumer = launch?.consumerId
      ? await ctx.db.select().from(ltiConsumers).where(eq(ltiConsumers.id, launch.consumerId)).get()
      : undefined;
    if (!launch || !consumer) {
      await finishSync(ctx, {
        id: sync.id,
        leaseId,
        counts,
        error: "The launch or its platform registration was deleted.",
      });
      return { state: "done" };
    }
    const roster = await readRoster(ctx, consumer, launch, {});
    await provisionRoster(ctx, consumer, roster, counts, async () => {
      if (!(await renewSync(ctx, sync.id, leaseId))) throw new LeaseLost();
    });
    await finishSync(ctx, { id: sync.id, leaseId, counts });
  } catch (error) {
    // The platform refused (or its launch has no roster any more): failing again will not help.
    // The sync ends with what it provisioned so far.
    if (error instanceof ApiError && error.code !== "bad_gateway") {
      await finishSync(ctx, { id: sync.id, leaseId, counts, error: error.message });
      return { state: "done" };
    }
    throw error;
  }
  return { state: "done" };
}
