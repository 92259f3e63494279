import { env } from "cloudflare:test";
import { eq, inArray, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { institutions, outboxEvents } from "../../src/db/schema";
import { batchGuard, isBatchGuardFailure, jsonArrays } from "../../src/platform/batch";
import { database } from "../../src/platform/db";
import { domainEvent, type EventMessage, MAX_EVENTS_PER_MESSAGE } from "../../src/platform/events";
import { newId } from "../../src/platform/ids";
import { commit } from "../../src/platform/service/commit";
import { invocationContext } from "../../src/platform/service/context";

const db = () => database(env.DB);

/**
 * A context whose events queue is a stub that records what it is sent, and whose `waitUntil` keeps
 * the promises so that a test can wait for the publishing commit hands over.
 */
function observedContext(options: { failSend?: boolean } = {}) {
  const sent: EventMessage[] = [];
  const pending: Promise<unknown>[] = [];
  const queue = {
    async send(body: EventMessage) {
      if (options.failSend) throw new Error("queue unavailable");
      sent.push(body);
    },
    async sendBatch(messages: Iterable<{ body: EventMessage }>) {
      if (options.failSend) throw new Error("queue unavailable");
      for (const message of messages) sent.push(message.body);
    },
  };
  const ctx = invocationContext({
    env: { ...env, EVENTS_QUEUE: queue as unknown as typeof env.EVENTS_QUEUE },
    requestId: "req_commit_test",
    waitUntil: (promise) => void pending.push(promise),
  });
  return {
    ctx,
    pending,
    /** Every id the queue received, in order. */
    published: async () => {
      await Promise.all(pending);
      return sent.flatMap((message) => message.event_ids);
    },
    messages: sent,
  };
}

function institutionRow(name = "Commit test") {
  const id = newId("inst");
  return { id, slug: id.toLowerCase().replace(/_/g, "-"), name };
}

function event(institutionId: string, data: Record<string, unknown> = {}) {
  return domainEvent(
    "member.created",
    { institutionId, userId: null },
    { member_id: newId("usr"), ...data },
    "2026-11-26T10:00:00Z",
  );
}

async function storedEvents(ids: string[]) {
  if (ids.length === 0) return [];
  return db()
    .select({ id: outboxEvents.id, type: outboxEvents.type, payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(inArray(outboxEvents.id, ids));
}

async function storedInstitution(id: string) {
  return db().select().from(institutions).where(eq(institutions.id, id)).get();
}

describe("commit", () => {
  it("writes the statements and their events in one batch, answers one result per statement, and publishes the ids", async () => {
    const { ctx, published } = observedContext();
    const row = institutionRow();
    const events = [event(row.id, { n: 1 }), event(row.id, { n: 2 })];
    const committed = await commit(ctx, {
      statements: [
        ctx.db.insert(institutions).values(row),
        // A bound D1 statement is taken as well as a query builder.
        env.DB.prepare("UPDATE institutions SET name = ? WHERE id = ?").bind("Renamed", row.id),
      ],
      events,
    });

    expect(committed.results).toHaveLength(2);
    // D1 counts a trigger's changes too: the insert's trigger gives the institution its number (two rows).
    expect(committed.results.map((result) => result.meta.changes)).toEqual([3, 1]);
    expect(committed.eventIds).toEqual(events.map((e) => e.id));
    expect((await storedInstitution(row.id))?.name).toBe("Renamed");
    const stored = await storedEvents(committed.eventIds);
    expect(stored.map((e) => e.id).sort()).toEqual(committed.eventIds.slice().sort());
    // JSON columns are stored as JSON, not as a string of it.
    expect(stored.find((e) => e.id === events[0]!.id)?.payload).toEqual(events[0]!.payload);
    expect(await published()).toEqual(committed.eventIds);
  });

  it("rolls back the statements and the events when a batchGuard fails, and publishes nothing", async () => {
    const { ctx, pending, published } = observedContext();
    const row = institutionRow();
    const events = [event(row.id)];
    const error = await commit(ctx, {
      statements: [ctx.db.insert(institutions).values(row), batchGuard(ctx.db, sql`1 = 0`)],
      events,
    }).catch((e: unknown) => e);

    expect(isBatchGuardFailure(error)).toBe(true);
    expect(await storedInstitution(row.id)).toBeUndefined();
    expect(await storedEvents(events.map((e) => e.id))).toEqual([]);
    expect(pending).toHaveLength(0);
    expect(await published()).toEqual([]);
  });

  it("writes no event under eventsIfLastChanged when the last statement changed nothing", async () => {
    const { ctx, pending, published } = observedContext();
    const events = [event("inst_missing"), event("inst_missing")];
    const committed = await commit(ctx, {
      statements: [
        ctx.db.update(institutions).set({ name: "Nobody" }).where(eq(institutions.id, "inst_missing")),
      ],
      events,
      eventsIfLastChanged: true,
    });

    expect(committed.results[0]?.meta.changes).toBe(0);
    expect(committed.eventIds).toEqual([]);
    expect(await storedEvents(events.map((e) => e.id))).toEqual([]);
    expect(pending).toHaveLength(0);
    expect(await published()).toEqual([]);
  });

  it("writes the events under eventsIfLastChanged when the last statement changed a row", async () => {
    const { ctx, published } = observedContext();
    const row = institutionRow();
    await db().insert(institutions).values(row);
    const events = [event(row.id), event(row.id)];
    const committed = await commit(ctx, {
      statements: [ctx.db.update(institutions).set({ name: "Changed" }).where(eq(institutions.id, row.id))],
      events,
      eventsIfLastChanged: true,
    });

    expect(committed.eventIds).toEqual(events.map((e) => e.id));
    expect(await storedEvents(committed.eventIds)).toHaveLength(2);
    expect(await published()).toEqual(committed.eventIds);
  });

  it("writes every one of 2,000 events (more JSON than one bound value may carry) and publishes them all in order", async () => {
    const { ctx, published, messages } = observedContext();
    const row = institutionRow();
    const filler = "x".repeat(300);
    const events = Array.from({ length: 2_000 }, (_, i) => event(row.id, { i, filler }));
    // The premise: the events travel as more than one JSON array.
    expect(JSON.stringify(events).length).toBeGreaterThan(600_000);
    expect(jsonArrays(events).length).toBeGreaterThan(1);

    const committed = await commit(ctx, { statements: [ctx.db.insert(institutions).values(row)], events });

    expect(committed.results).toHaveLength(1);
    expect(committed.eventIds).toHaveLength(2_000);
    const [{ count } = { count: 0 }] = await db()
      .select({ count: sql<number>`count(*)` })
      .from(outboxEvents)
      .where(eq(outboxEvents.institutionId, row.id));
    expect(count).toBe(2_000);
    expect(await published()).toEqual(events.map((e) => e.id));
    expect(messages).toHaveLength(2_000 / MAX_EVENTS_PER_MESSAGE);
  });

  it("keeps the change when publishing fails: the events stay in the outbox for the sweep", async () => {
    const { ctx, published } = observedContext({ failSend: true });
    const row = institutionRow();
    const events = [event(row.id)];
    const committed = await commit(ctx, { statements: [ctx.db.insert(institutions).values(row)], events });

    expect(committed.eventIds).toEqual([events[0]!.id]);
    expect(await published()).toEqual([]);
    expect(await storedInstitution(row.id)).toBeDefined();
    const [stored] = await db()
      .select({ dispatchedAt: outboxEvents.dispatchedAt })
      .from(outboxEvents)
      .where(eq(outboxEvents.id, events[0]!.id));
    expect(stored).toEqual({ dispatchedAt: null });
  });

  it("runs statements without events, and nothing at all for an empty change", async () => {
    const { ctx, pending } = observedContext();
    const row = institutionRow();
    const committed = await commit(ctx, { statements: [ctx.db.insert(institutions).values(row)] });
    expect(committed).toMatchObject({ eventIds: [] });
    expect(committed.results).toHaveLength(1);
    expect(await storedInstitution(row.id)).toBeDefined();
    expect(await commit(ctx, { statements: [] })).toEqual({ results: [], eventIds: [] });
    expect(pending).toHaveLength(0);
  });
});
