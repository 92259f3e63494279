import { and, isNull, lt, or } from "drizzle-orm";
import { outboxEvents } from "../db/schema";
import { type Database, inJsonList } from "./db";
import { publishEvents } from "./events";
import { nowIso } from "./ids";
import type { ServiceContext } from "./service/context";

/** An event is re-sent when a minute passed without a dispatch, then at most every five minutes. */
const UNDISPATCHED_AFTER_MS = 60_000;
const REQUEUE_EVERY_MS = 300_000;
const SWEEP_LIMIT = 1_000;

/**
 * The dispatcher's safety net: an event that not every subscriber has taken (its `send` failed, its
 * messages were lost, or a subscriber kept failing until they were dead-lettered) is sent to the
 * events queue again, oldest first. Subscribers are idempotent, so the ones that already have it do
 * nothing again. The scan reads the partial index of undispatched events only.
 */
export async function requeueUndispatchedEvents(ctx: ServiceContext): Promise<number> {
  const { db } = ctx;
  const now = ctx.now();
  const due = await undispatchedEvents(db, now);
  if (due.length === 0) return 0;
  const ids = due.map((e) => e.id);
  await db.update(outboxEvents).set({ requeuedAt: now }).where(inJsonList(outboxEvents.id, ids));
  await publishEvents(ctx, ids);
  return ids.length;
}

/** The sweep's scan; exported for the test that checks it reads the partial index. */
export function undispatchedEvents(db: Database, now: number) {
  return db
    .select({ id: outboxEvents.id })
    .from(outboxEvents)
    .where(
      and(
        isNull(outboxEvents.dispatchedAt),
        lt(outboxEvents.createdAt, nowIso(now - UNDISPATCHED_AFTER_MS)),
        or(isNull(outboxEvents.requeuedAt), lt(outboxEvents.requeuedAt, now - REQUEUE_EVERY_MS)),
      ),
    )
    .orderBy(outboxEvents.createdAt)
    .limit(SWEEP_LIMIT);
}
