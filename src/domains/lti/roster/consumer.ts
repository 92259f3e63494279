import { eq } from "drizzle-orm";
import { ltiConsumers, ltiLaunches } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import { newId } from "../../../platform/ids";
import { isHeld } from "../../../platform/jobs/lease";
import { parseMessage, queueDelaySeconds } from "../../../platform/queue";
import type { ServiceContext } from "../../../platform/service/context";
import { readRoster } from "./nrps";
import { noCounts, provisionRoster } from "./provision";
import {
  claimSync,
  failSync,
  findSync,
  finishSync,
  RosterMessageSchema,
  type RosterSync,
  releaseSync,
  renewSync,
} from "./syncs";

/**
 * The roster-sync queue (`lingua-lti-roster`, max_batch_size 1): a message names a sync and its
 * generation; the invocation claims it under a lease, reads the roster again from the platform and
 * provisions it chunk by chunk, renewing the lease before each. Provisioning is idempotent (the
 * (registration, sub) link decides), so a sync taken over after a lost invocation starts again from
 * the first member and finds those done linked already. A platform that fails is retried with
 * backoff (the queue's retries); one that refuses, or a launch or registration gone, fails the sync.
 */

const GAVE_UP = "The roster could not be synced: it failed on every attempt. Start the sync again.";

class LeaseLost extends Error {}

function log(level: "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, message, ...fields }));
}

const isActive = (sync: RosterSync) => sync.status === "queued" || sync.status === "processing";

function secondsUntil(at: number | null, now: number): number {
  return queueDelaySeconds(((at ?? now) - now) / 1000, 1);
}

export async function consumeRosterSyncs(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  for (const message of batch.messages) await handleMessage(ctx, message);
}

async function handleMessage(ctx: ServiceContext, message: Message<unknown>): Promise<void> {
  const body = await parseMessage(RosterMessageSchema, message, {
    queue: "lingua-lti-roster",
    deadLetter: ctx.env.LTI_ROSTER_DLQ,
  });
  if (!body) return;
  const leaseId = newId("lse");
  const sync = await claimSync(ctx, { message: body, leaseId });
  if (!sync) {
    const current = await findSync(ctx, body.sync_id);
    const now = ctx.now();
    if (current && isActive(current) && current.generation === body.generation && isHeld(current, now))
      message.retry({ delaySeconds: secondsUntil(current.leaseUntil, now) });
    else message.ack();
    return;
  }
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
      message.ack();
      return;
    }
    const roster = await readRoster(ctx, consumer, launch, {});
    await provisionRoster(ctx, consumer, roster, counts, async () => {
      if (!(await renewSync(ctx, sync.id, leaseId))) throw new LeaseLost();
    });
    await finishSync(ctx, { id: sync.id, leaseId, counts });
    message.ack();
  } catch (error) {
    if (error instanceof LeaseLost) {
      message.ack();
      return;
    }
    // The platform refused (or its launch has no roster any more): failing again will not help.
    if (error instanceof ApiError && error.code !== "bad_gateway") {
      await finishSync(ctx, { id: sync.id, leaseId, counts, error: error.message });
      message.ack();
      return;
    }
    log("warn", "roster sync failed; retrying", {
      sync_id: sync.id,
      attempt: message.attempts,
      error: error instanceof Error ? error.message : String(error),
    });
    const delaySeconds = Math.min(300, 5 * 2 ** (message.attempts - 1));
    await releaseSync(ctx, { id: sync.id, leaseId, retryInMs: delaySeconds * 1000 }).catch(() => undefined);
    message.retry({ delaySeconds });
  }
}

/** The roster queue's dead letters: the sync they carried failed for good. */
export async function deadLetterRosterSyncs(
  batch: MessageBatch<unknown>,
  ctx: ServiceContext,
): Promise<void> {
  for (const message of batch.messages) {
    const body = await parseMessage(RosterMessageSchema, message, { queue: "lingua-lti-roster-dlq" });
    if (!body) continue;
    const sync = await findSync(ctx, body.sync_id);
    if (!sync || !isActive(sync) || sync.generation !== body.generation) {
      message.ack();
      continue;
    }
    const now = ctx.now();
    if (isHeld(sync, now)) {
      message.retry({ delaySeconds: secondsUntil(sync.leaseUntil, now) });
      continue;
    }
    await failSync(ctx, { id: sync.id, generation: sync.generation, reason: GAVE_UP });
    message.ack();
  }
}
