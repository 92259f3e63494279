import { env } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  outboxEvents,
  xapiBackfills,
  xapiBatches,
  xapiStatementKeys,
  xapiStatements,
} from "../../src/db/schema";
import { attemptsPage, lessonsPage } from "../../src/domains/xapi/backfill/sources";
import {
  BACKFILL_HELD_GUARD,
  FAILED_STATEMENTS_SQL,
  FORGET_CHECKPOINT_SQL,
  FORGET_FAILED_ENTRIES_SQL,
  FORGET_FAILED_KEYS_SQL,
  FORGET_FAILED_SQL,
  LEVEL_CHANGES_SQL,
  START_BACKFILL_SQL,
} from "../../src/domains/xapi/backfill/sql";
import { isBatchGuardFailure } from "../../src/platform/batch";
import { database } from "../../src/platform/db";
import { newId } from "../../src/platform/ids";
import { testContext } from "../helpers/context";
import { createTenant } from "../helpers/tenants";
import { batchesOf, createEndpoint, statementKeysOf, statementsOf, updateEndpoint } from "./support";

/** Each raw statement of src/domains/xapi/backfill/sql.ts, against the real schema. */

const db = () => database(env.DB);
const d1 = () => env.DB;
const SINCE = "2026-11-01T00:00:00Z";
const UNTIL = "2026-11-21T09:30:00Z";

function start(id: string, endpointId: string, institutionId: string) {
  return d1()
    .prepare(START_BACKFILL_SQL)
    .bind(id, endpointId, institutionId, SINCE, UNTIL, 1_000, 900, null)
    .all<{ id: string }>();
}

/** A statement of `endpointId` as the delivery leaves it (its own state; a batch `xbt_old_<endpoint>`). */
async function statement(
  endpointId: string,
  fields: Partial<typeof xapiStatements.$inferInsert> & { id: string },
): Promise<void> {
  const row = {
    endpointId,
    batchId: `xbt_old_${endpointId}`,
    verb: "answered" as const,
    activityId: `https://a.example/${fields.id}`,
    userId: "usr_x",
    occurredAt: "2026-11-10T00:00:00Z",
    status: "failed" as const,
    attempts: 4,
    lastError: "HTTP 503",
    createdAt: "2026-11-10T00:00:00Z",
    completedAt: "2026-11-11T00:00:00Z",
    ...fields,
  };
  const batchId = row.batchId ?? `xbt_old_${endpointId}`;
  const entry = JSON.stringify([row.id, row.verb, row.activityId, row.userId, row.occurredAt]);
  await db()
    .insert(xapiBatches)
    .values({
      id: batchId,
      endpointId,
      status: "failed",
      entries: `[${entry}]`,
      statementCount: 1,
      createdAt: row.createdAt,
      completedAt: row.completedAt,
    })
    .onConflictDoUpdate({
      target: xapiBatches.id,
      set: {
        entries: sql`json_insert(${xapiBatches.entries}, '$[#]', json(${entry}))`,
        statementCount: sql`${xapiBatches.statementCount} + 1`,
      },
    });
  await db().insert(xapiStatements).values(row);
  await db().insert(xapiStatementKeys).values({ id: row.id, batchId });
}

async function running(endpointId: string, leaseId: string) {
  const id = newId("xbf");
  await db().insert(xapiBackfills).values({
    id,
    endpointId,
    since: SINCE,
    until: UNTIL,
    status: "running",
    generation: 2,
    leaseId,
    leaseUntil: 5_000,
    heartbeatAt: 1,
    createdAt: UNTIL,
  });
  return id;
}

describe("xAPI back-fill SQL", () => {
  it("starts a back-fill only for an enabled endpoint of the institution, one active at a time", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const endpoint = await createEndpoint(a.institution.id, "http://127.0.0.1:9/lrs");
    const other = await createEndpoint(a.institution.id, "http://127.0.0.1:9/other");

    // Another institution's id: nothing.
    expect((await start(newId("xbf"), endpoint, b.institution.id)).results).toEqual([]);
    const first = newId("xbf");
    expect((await start(first, endpoint, a.institution.id)).results).toEqual([{ id: first }]);
    const row = await db().select().from(xapiBackfills).where(eq(xapiBackfills.id, first)).get();
    expect(row).toMatchObject({
      endpointId: endpoint,
      since: SINCE,
      until: UNTIL,
      status: "queued",
      cursor: null,
      statementsQueued: 0,
      generation: 0,
      leaseId: null,
      leaseUntil: 1_000,
      heartbeatAt: 900,
      createdAt: UNTIL,
      completedAt: null,
    });
    // A second while the first is queued (or running): nothing; another endpoint is free.
    expect((await start(newId("xbf"), endpoint, a.institution.id)).results).toEqual([]);
    await db().update(xapiBackfills).set({ status: "running" }).where(eq(xapiBackfills.id, first));
    expect((await start(newId("xbf"), endpoint, a.institution.id)).results).toEqual([]);
    expect((await start(newId("xbf"), other, a.institution.id)).results).toHaveLength(1);
    // Once it completed or failed, the next one starts.
    await db().update(xapiBackfills).set({ status: "failed" }).where(eq(xapiBackfills.id, first));
    expect((await start(newId("xbf"), endpoint, a.institution.id)).results).toHaveLength(1);
    // A disabled endpoint: nothing.
    const off = await createEndpoint(a.institution.id, "http://127.0.0.1:9/off");
    await updateEndpoint(off, { enabled: false });
    expect((await start(newId("xbf"), off, a.institution.id)).results).toEqual([]);
  });

  it("finds the failed statements to send again: in the window, failed before it, wanted, not rejected alone, of a member, a level change still in the outbox; a keyset page at a time", async () => {
    const tenant = await createTenant();
    const member = tenant.admin.id;
    const endpoint = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    const elsewhere = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/else");
    const mine = { userId: member };
    await statement(endpoint, { ...mine, id: "s1", completedAt: "2026-11-11T00:00:01Z" });
    await statement(endpoint, {
      ...mine,
      id: "s2",
      completedAt: "2026-11-11T00:00:02Z",
      lastError: "Timed out",
    });
    await statement(endpoint, {
      ...mine,
      id: "s3",
      completedAt: "2026-11-11T00:00:02Z",
      lastError: "endpoint disabled",
    });
    await statement(endpoint, { ...mine, id: "s4", occurredAt: UNTIL, completedAt: UNTIL });
    await statement(endpoint, { ...mine, id: "s5", verb: "mastered", completedAt: "2026-11-11T00:00:03Z" });
    // Not these: rejected alone, outside the window, failed after it started, not wanted, not failed,
    // of someone no longer a member, a level change older than the outbox keeps, another endpoint's.
    await statement(endpoint, { ...mine, id: "x400", lastError: "HTTP 400: bad statement" });
    await statement(endpoint, {
      ...mine,
      id: "x413",
      lastError: "HTTP 413: the statement alone is larger than the LRS accepts",
    });
    await statement(endpoint, { ...mine, id: "xold", occurredAt: "2026-10-31T23:59:59Z" });
    await statement(endpoint, { ...mine, id: "xlate", completedAt: "2026-11-21T09:30:01Z" });
    await statement(endpoint, { ...mine, id: "xverb", verb: "earned" });
    await statement(endpoint, { ...mine, id: "xsent", status: "sent" });
    await statement(endpoint, { id: "xgone" });
    await statement(endpoint, {
      ...mine,
      id: "xlevel",
      verb: "mastered",
      occurredAt: "2026-11-02T00:00:00Z",
    });
    await statement(elsewhere, { ...mine, id: "xelse" });
    const page = (after: [string, string] | null, limit: number) =>
      d1()
        .prepare(FAILED_STATEMENTS_SQL)
        .bind(
          endpoint,
          after?.[0] ?? null,
          after?.[1] ?? null,
          limit,
          SINCE,
          UNTIL,
          '["answered","mastered"]',
          tenant.institution.id,
          "2026-11-05T00:00:00Z",
        )
        .all<{ id: string; completed_at: string }>();
    expect((await page(null, 10)).results.map((r) => r.id)).toEqual(["s1", "s2", "s3", "s5", "s4"]);
    const first = (await page(null, 2)).results;
    expect(first.map((r) => r.id)).toEqual(["s1", "s2"]);
    const last = first.at(-1)!;
    expect((await page([last.completed_at, last.id], 2)).results.map((r) => r.id)).toEqual(["s3", "s5"]);

    // The walk is a range of the health index, not a scan of the endpoint's statements.
    const plan = await d1()
      .prepare(`EXPLAIN QUERY PLAN ${FAILED_STATEMENTS_SQL}`)
      .bind(endpoint, null, null, 10, SINCE, UNTIL, '["answered"]', tenant.institution.id, SINCE)
      .all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail).join("\n")).toContain("xapi_statements_health_idx");
  });

  it("forgets failed statements under the lease guard, with the checkpoint, only while they are failed", async () => {
    const tenant = await createTenant();
    const endpoint = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    await statement(endpoint, { id: "r1" });
    await statement(endpoint, { id: "r2" });
    await statement(endpoint, { id: "r3", status: "sent", completedAt: "2026-11-11T00:00:00Z" });
    const backfill = await running(endpoint, "lse_mine");

    // Another lease, or another generation: the guard fails the whole batch.
    for (const [lease, generation] of [
      ["lse_other", 2],
      ["lse_mine", 1],
    ] as const) {
      const error = await d1()
        .batch([d1().prepare(BACKFILL_HELD_GUARD).bind(backfill, lease, generation)])
        .catch((e: unknown) => e);
      expect(isBatchGuardFailure(error)).toBe(true);
    }

    const ids = JSON.stringify(["r1", "r2", "r3"]);
    const results = await d1().batch([
      d1().prepare(BACKFILL_HELD_GUARD).bind(backfill, "lse_mine", 2),
      d1().prepare(FORGET_FAILED_ENTRIES_SQL).bind(ids, endpoint),
      d1().prepare(FORGET_FAILED_KEYS_SQL).bind(ids, endpoint),
      d1().prepare(FORGET_FAILED_SQL).bind(ids, endpoint),
      d1()
        .prepare(FORGET_CHECKPOINT_SQL)
        .bind(backfill, "lse_mine", JSON.stringify({ source: "attempts", after: null }), 9_000, 8_000),
    ]);
    expect(results.map((r) => r.meta.changes)).toEqual([0, 1, 2, 2, 1]);
    const rows = await db().select().from(xapiStatements).where(eq(xapiStatements.endpointId, endpoint));
    expect(rows.map((r) => [r.id, r.status])).toEqual([["r3", "sent"]]);
    // Their keys went (offered again, they are stored anew), and so did their entries in their batch.
    expect((await statementKeysOf(endpoint)).map((k) => k.id)).toEqual(["r3"]);
    expect((await statementsOf(endpoint)).map((s) => [s.id, s.status])).toEqual([["r3", "sent"]]);
    expect((await batchesOf(endpoint)).map((b) => b.statementCount)).toEqual([1]);
    expect(await db().select().from(xapiBackfills).where(eq(xapiBackfills.id, backfill)).get()).toMatchObject(
      {
        cursor: { source: "attempts", after: null },
        statementsQueued: 0,
        leaseUntil: 9_000,
        heartbeatAt: 8_000,
      },
    );
    // Run again (a redelivered chunk) or by another lease: nothing changes.
    const again = await d1().batch([
      d1().prepare(FORGET_FAILED_ENTRIES_SQL).bind(ids, endpoint),
      d1().prepare(FORGET_FAILED_KEYS_SQL).bind(ids, endpoint),
      d1().prepare(FORGET_FAILED_SQL).bind(ids, endpoint),
      d1().prepare(FORGET_CHECKPOINT_SQL).bind(backfill, "lse_other", "{}", 1, 1),
    ]);
    expect(again.map((r) => r.meta.changes)).toEqual([0, 0, 0, 0]);
  });

  it("reads attempts a keyset page at a time on attempts_institution_time_idx", async () => {
    const scope = { institutionId: "ins_x", since: SINCE, until: UNTIL, wants: new Set<never>() };
    const { sql, params } = attemptsPage(testContext(), scope, ["2026-11-10T00:00:00Z", "att_1"], 20).toSQL();
    const plan = await d1()
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...params)
      .all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail).join("\n");
    expect(details).toContain("attempts_institution_time_idx");
    expect(details).not.toMatch(/TEMP B-TREE/);
  });

  it("reads the members' lessons a keyset page at a time, by the learners' numbers on lesson_progress's key", async () => {
    const scope = {
      institutionId: "ins_x",
      since: SINCE,
      until: UNTIL,
      wants: new Set(["progressed", "completed"] as const),
    };
    const { sql, params } = lessonsPage(testContext(), scope, ["usr_1", "lsn_1"], 20).toSQL();
    const plan = await d1()
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...params)
      .all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail).join("\n");
    expect(details).toMatch(/SEARCH lesson_progress USING PRIMARY KEY \(user_number=\?\)/);
    expect(details).not.toMatch(/SCAN (lesson_progress|lessons|courses)\b/);
  });

  it("reads the current members' CEFR changes of the window, a keyset page at a time on outbox_events_type_idx", async () => {
    const tenant = await createTenant();
    const event = (id: string, userId: string, type: string, createdAt: string) =>
      db()
        .insert(outboxEvents)
        .values({
          id,
          type,
          institutionId: tenant.institution.id,
          userId,
          payload: { skill: "reading" },
          createdAt,
        });
    const member = tenant.learner.id;
    await event("evt_b1", member, "cefr.level_changed", "2026-11-10T00:00:00Z");
    await event("evt_b2", member, "cefr.level_changed", "2026-11-10T00:00:00Z");
    await event("evt_b3", member, "cefr.level_changed", UNTIL);
    await event("evt_bx1", member, "lesson.completed", "2026-11-10T00:00:00Z");
    await event("evt_bx2", member, "cefr.level_changed", "2026-10-31T23:59:59Z");
    await event("evt_bx3", "usr_gone", "cefr.level_changed", "2026-11-10T00:00:00Z");
    const page = (after: [string, string], limit: number) =>
      d1()
        .prepare(LEVEL_CHANGES_SQL)
        .bind(tenant.institution.id, SINCE, UNTIL, after[0], after[1], limit)
        .all<{ id: string; created_at: string; payload: string }>();
    const all = (await page(["", ""], 10)).results;
    expect(all.map((e) => e.id)).toEqual(["evt_b1", "evt_b2", "evt_b3"]);
    expect(JSON.parse(all[0]!.payload)).toEqual({ skill: "reading" });
    const first = (await page(["", ""], 2)).results;
    expect((await page([first[1]!.created_at, first[1]!.id], 2)).results.map((e) => e.id)).toEqual([
      "evt_b3",
    ]);
    const plan = await d1()
      .prepare(`EXPLAIN QUERY PLAN ${LEVEL_CHANGES_SQL}`)
      .bind(tenant.institution.id, SINCE, UNTIL, "", "", 10)
      .all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail).join("\n");
    expect(details).toContain("outbox_events_type_idx");
    expect(details).not.toMatch(/TEMP B-TREE/);
  });
});
