import { z } from "@hono/zod-openapi";
import { and, desc, eq, inArray } from "drizzle-orm";
import { ltiRosterSyncs } from "../../../db/schema";
import { ApiError } from "../../../platform/errors";
import { newId, nowIso } from "../../../platform/ids";
import {
  awaitingMessage,
  claimable,
  heldBy,
  type LeasedJobs,
  renewed,
  taken,
} from "../../../platform/jobs/lease";
import { sendMessage } from "../../../platform/queue";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { launchForServices, requireConsumer } from "../grades/platform-call";
import { readRoster, requireMembershipsUrl } from "./nrps";
import { noCounts, provisionRoster, type SyncCounts } from "./provision";
import type { RosterSyncSchema } from "./schemas";

/**
 * `POST …/lti-launches/{launch}/members/sync`: the roster's active members made Lingua members
 * (provision.ts). Up to IN_REQUEST_MEMBERS active members within the request; a larger roster is a
 * leased job on `lingua-lti-roster` (consumer.ts), resumed by the minute sweep when its lease runs out.
 */

export type RosterSync = typeof ltiRosterSyncs.$inferSelect;

/** Rosters of up to this many active members are synced within the request. */
export const IN_REQUEST_MEMBERS = 500;

export const RosterMessageSchema = z.object({
  sync_id: z.string().min(1),
  generation: z.number().int().min(0),
});
export type RosterMessage = z.infer<typeof RosterMessageSchema>;

const ACTIVE = ["queued", "processing"] as const;
export const isActive = () => inArray(ltiRosterSyncs.status, [...ACTIVE]);

/** The syncs' table as the lease mechanism sees it (platform/jobs/lease.ts). */
export const LEASE: LeasedJobs = {
  table: ltiRosterSyncs,
  id: ltiRosterSyncs.id,
  generation: ltiRosterSyncs.generation,
  leaseId: ltiRosterSyncs.leaseId,
  leaseUntil: ltiRosterSyncs.leaseUntil,
  active: () => isActive(),
};

export function presentSync(row: RosterSync): z.infer<typeof RosterSyncSchema> {
  return {
    id: row.id,
    launch_id: row.launchId,
    status: row.status,
    active: row.activeCount,
    inactive: row.inactiveCount,
    created: row.createdCount,
    already_linked: row.alreadyLinkedCount,
    seats_exhausted: row.seatsExhaustedCount,
    error: row.error,
    created_at: row.createdAt,
    completed_at: row.completedAt,
  };
}

const countColumns = (counts: SyncCounts) => ({
  activeCount: counts.active,
  inactiveCount: counts.inactive,
  createdCount: counts.created,
  alreadyLinkedCount: counts.already_linked,
  seatsExhaustedCount: counts.seats_exhausted,
});

async function activeSync(ctx: ServiceContext, launchId: string): Promise<RosterSync | undefined> {
  return ctx.db
    .select()
    .from(ltiRosterSyncs)
    .where(and(eq(ltiRosterSyncs.launchId, launchId), isActive()))
    .get();
}

export async function enqueueRosterSync(ctx: ServiceContext, message: RosterMessage): Promise<void> {
  await sendMessage(ctx, ctx.env.LTI_ROSTER_QUEUE, message);
}

/**
 * Syncs the launch's roster: within the request (answered `completed`), or queued (answered `queued`)
 * above IN_REQUEST_MEMBERS active members. While a queued sync of the launch is still running, the
 * request answers it and starts nothing.
 */
export async function syncLaunchRoster(
  ctx: PrincipalContext,
  launchId: string,
): Promise<{ sync: RosterSync; queued: boolean }> {
  const { launch, consumer } = await launchForServices(ctx, launchId);
  requireMembershipsUrl(ctx, launch);
  const registration = requireConsumer(consumer, "lti_roster_unavailable");
  const running = await activeSync(ctx, launch.id);
  if (running) return { sync: running, queued: true };
  const roster = await readRoster(ctx, registration, launch, {});
  const now = ctx.now();
  const base: RosterSync = {
    id: newId("lrs"),
    institutionId: registration.institutionId,
    launchId: launch.id,
    status: "queued",
    activeCount: null,
    inactiveCount: null,
    createdCount: 0,
    alreadyLinkedCount: 0,
    seatsExhaustedCount: 0,
    error: null,
    generation: 0,
    leaseId: null,
    leaseUntil: null,
    heartbeatAt: now,
    createdAt: nowIso(now),
    completedAt: null,
  };
  const active = roster.filter((m) => m.status === "Active").length;
  if (active <= IN_REQUEST_MEMBERS) {
    const counts = noCounts();
    await provisionRoster(ctx, registration, roster, counts);
    const done = nowIso(ctx.now());
    const row: RosterSync = { ...base, status: "completed", ...countColumns(counts), completedAt: done };
    await ctx.db.insert(ltiRosterSyncs).values(row).run();
    return { sync: row, queued: false };
  }
  const row: RosterSync = {
    ...base,
    activeCount: active,
    inactiveCount: roster.length - active,
    ...awaitingMessage(now),
  };
  try {
    await ctx.db.insert(ltiRosterSyncs).values(row).run();
  } catch (error) {
    // Another request queued one meanwhile (one active sync per launch): answer that one.
    const twin = await activeSync(ctx, launch.id);
    if (twin) return { sync: twin, queued: true };
    throw error;
  }
  // Should the send fail, the sweep sends it once the lease (awaiting this message) runs out.
  await enqueueRosterSync(ctx, { sync_id: row.id, generation: 0 }).catch((error) =>
    console.error(
      JSON.stringify({
        level: "error",
        message: "roster sync not queued",
        sync_id: row.id,
        error: String(error),
      }),
    ),
  );
  return { sync: row, queued: true };
}

/** The launch's latest sync, or 404. */
export async function latestLaunchSync(ctx: PrincipalContext, launchId: string): Promise<RosterSync> {
  const { launch } = await launchForServices(ctx, launchId);
  const row = await ctx.db
    .select()
    .from(ltiRosterSyncs)
    .where(eq(ltiRosterSyncs.launchId, launch.id))
    .orderBy(desc(ltiRosterSyncs.createdAt), desc(ltiRosterSyncs.id))
    .get();
  if (!row) throw new ApiError("not_found", `The launch ${launchId} has no roster sync yet.`);
  return row;
}

// ——— The job's steps (consumer.ts, sweep.ts) ———

export async function findSync(ctx: ServiceContext, id: string): Promise<RosterSync | null> {
  return (await ctx.db.select().from(ltiRosterSyncs).where(eq(ltiRosterSyncs.id, id)).get()) ?? null;
}

/** Takes the sync for the message's generation under a new lease; null when it is not the message's to take. */
export async function claimSync(
  ctx: ServiceContext,
  input: { message: RosterMessage; leaseId: string },
): Promise<RosterSync | null> {
  const now = ctx.now();
  const [row] = await ctx.db
    .update(ltiRosterSyncs)
    .set({ status: "processing", ...taken(input.leaseId, now), heartbeatAt: now })
    .where(
      and(
        eq(ltiRosterSyncs.id, input.message.sync_id),
        isActive(),
        eq(ltiRosterSyncs.generation, input.message.generation),
        claimable(LEASE, now),
      ),
    )
    .returning();
  return row ?? null;
}

/** Renews the holder's lease; false when it lost the sync (the sweep gave it to another message). */
export async function renewSync(ctx: ServiceContext, id: string, leaseId: string): Promise<boolean> {
  const now = ctx.now();
  const result = await ctx.db
    .update(ltiRosterSyncs)
    .set({ ...renewed(now), heartbeatAt: now })
    .where(and(eq(ltiRosterSyncs.id, id), heldBy(LEASE, leaseId), isActive()))
    .run();
  return result.meta.changes === 1;
}

/** The holder finishes the sync with its counts (or its error). */
export async function finishSync(
  ctx: ServiceContext,
  input: { id: string; leaseId: string; counts: SyncCounts; error?: string },
): Promise<void> {
  const now = ctx.now();
  await ctx.db
    .update(ltiRosterSyncs)
    .set({
      status: input.error ? "failed" : "completed",
      ...countColumns(input.counts),
      error: input.error ?? null,
      leaseId: null,
      leaseUntil: null,
      heartbeatAt: now,
      completedAt: nowIso(now),
    })
    .where(and(eq(ltiRosterSyncs.id, input.id), heldBy(LEASE, input.leaseId), isActive()))
    .run();
}

/** Gives the sync back after an error to the message's retry, due in `retryInMs`. */
export async function releaseSync(
  ctx: ServiceContext,
  input: { id: string; leaseId: string; retryInMs: number },
): Promise<void> {
  await ctx.db
    .update(ltiRosterSyncs)
    .set(awaitingMessage(ctx.now(), input.retryInMs))
    .where(and(eq(ltiRosterSyncs.id, input.id), heldBy(LEASE, input.leaseId)))
    .run();
}

/** Marks an active sync failed, only if nobody holds it and it is still at `generation`. */
export async function failSync(
  ctx: ServiceContext,
  input: { id: string; generation: number; reason: string },
): Promise<boolean> {
  const now = ctx.now();
  const result = await ctx.db
    .update(ltiRosterSyncs)
    .set({
      status: "failed",
      error: input.reason,
      leaseId: null,
      leaseUntil: null,
      heartbeatAt: now,
      completedAt: nowIso(now),
    })
    .where(
      and(
        eq(ltiRosterSyncs.id, input.id),
        isActive(),
        eq(ltiRosterSyncs.generation, input.generation),
        claimable(LEASE, now),
      ),
    )
    .run();
  return result.meta.changes === 1;
}
