import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { courseNumberOf, lessonNumberOf, userNumberOf } from "../../src/db/numbers";
import { attempts, lessonProgress, outboxEvents, xapiBatches, xapiStatements } from "../../src/db/schema";
import {
  attemptsOfBatchFactsQuery,
  failPendingQuery,
  ownStateQuery,
  pendingOfOwnStateBatchesQuery,
  recordSentBatchesQuery,
  recordStatementsQueries,
} from "../../src/domains/xapi/delivery/queries";
import {
  ATTEMPT_FACTS_SQL,
  type AttemptFactRow,
  attemptFactOf,
  CLEAR_BODIES_OF_BATCHES_SQL,
  FAIL_PENDING_OF_BATCHES_SQL,
  FAILING_ENDPOINTS_SQL,
  FORWARDED_EVENTS_SQL,
  FORWARDING_ENDPOINTS_SQL,
  INSERT_BATCHES_SQL,
  INSERT_STATEMENTS_SQL,
  KEYED_TO_BATCHES_SQL,
  LESSONS_IN_PROGRESS_SQL,
  MARK_FAILING_NOTIFIED_SQL,
  OWN_STATE_OF_BATCHES_SQL,
  PURGE_BATCHES_SQL,
  PURGE_STATEMENT_KEYS_SQL,
  PURGE_STATEMENTS_SQL,
  UNSENT_BATCHES_SQL,
} from "../../src/domains/xapi/delivery/sql";
import { database } from "../../src/platform/db";
import { newId } from "../../src/platform/ids";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createTenant } from "../helpers/tenants";
import {
  createEndpoint,
  recordAttempts,
  statementKeysOf,
  statementRowsOf,
  statementsOf,
  updateEndpoint,
} from "./support";

/** Each statement of src/domains/xapi/delivery/sql.ts and queries.ts, against the real schema. */

const db = () => database(env.DB);
const d1 = () => env.DB;
const NOW = "2026-11-21T09:30:00Z";

async function event(institutionId: string | null, type: string, payload: Record<string, unknown> = {}) {
  const id = newId("evt");
  await db().insert(outboxEvents).values({ id, type, institutionId, userId: null, payload, createdAt: NOW });
  return id;
}

/** Statement ids keyed through INSERT_STATEMENTS_SQL to batch `batchId`. */
async function insertStatements(batchId: string, ids: string[]) {
  return d1()
    .prepare(INSERT_STATEMENTS_SQL)
    .bind(JSON.stringify([[batchId, ids]]))
    .run();
}

/** A statement's log entry in its batch. */
const entry = (id: string) => [id, "answered", `https://a.example/${id}`, "usr_x", NOW];
/** A batch keeps its statements' facts (an attempt by its id), never their bodies. */
const fact = (id: string) => ["answered", `att_${id}`];

/**
 * An offer's commit as offer.ts writes it, in one D1 batch: the statements keyed, then the batches
 * made. Returns how many keys it stored and the batches it made.
 */
async function commitOffer(endpointId: string, batches: [string, string[]][], lease: number | null = null) {
  const total = new Set(batches.flatMap(([, ids]) => ids)).size;
  const params = [
    JSON.stringify(batches.map(([id, ids]) => [id, ids.map(fact), ids.map(entry)])),
    endpointId,
    NOW,
    lease,
    total,
  ];
  const [keys, made] = await d1().batch<{ id: string }>([
    d1().prepare(INSERT_STATEMENTS_SQL).bind(JSON.stringify(batches)),
    d1()
      .prepare(INSERT_BATCHES_SQL)
      .bind(...params),
  ]);
  return {
    stored: keys?.meta.changes,
    made: (made?.results ?? []).map((row) => row.id).sort(),
    // What the batches' insert read (the batches' JSON elements, and the entries and keys it looked up).
    rowsRead: made?.meta.rows_read ?? 0,
  };
}

describe("xAPI delivery SQL", () => {
  it("finds the enabled endpoints of the events' institutions, and the events worth forwarding", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const on = await createEndpoint(a.institution.id, "http://127.0.0.1:9/lrs", { activities: ["answered"] });
    await createEndpoint(a.institution.id, "http://127.0.0.1:9/off", { enabled: false });
    await createEndpoint(b.institution.id, "http://127.0.0.1:9/b", { enabled: false });
    const forwarded = await event(a.institution.id, "lesson.completed");
    const otherType = await event(a.institution.id, "member.created");
    const notForwarding = await event(b.institution.id, "lesson.completed");
    const list = JSON.stringify([forwarded, otherType, notForwarding]);

    const endpoints = await d1().prepare(FORWARDING_ENDPOINTS_SQL).bind(list).all();
    expect(endpoints.results).toEqual([
      { id: on, institution_id: a.institution.id, activities: '["answered"]', actor_format: "account" },
    ]);
    const events = await d1()
      .prepare(FORWARDED_EVENTS_SQL)
      .bind(list, JSON.stringify(["lesson.completed"]))
      .all<{ id: string }>();
    expect(events.results.map((e) => e.id)).toEqual([forwarded]);
  });

  it("reads the lessons in progress of (user, lesson) pairs", async () => {
    const { learner } = await createTenant();
    const course = await createPublishedCourse({ lessons: 3, blocksPerLesson: 1, itemsPerBlock: 1 });
    const [a, b, c] = course.lessons.map((l) => l.id) as [string, string, string];
    // Stored by numbers (docs/design/capacity.md, "Integer keys"); asked and answered by ids.
    const row = (lessonId: string, status: "in_progress" | "completed", itemsDone: number) => ({
      userNumber: userNumberOf(learner.id),
      lessonNumber: lessonNumberOf(lessonId),
      courseNumber: courseNumberOf(course.courseId),
      itemsDone,
      itemsTotal: 4,
      scoreSum: itemsDone,
      status,
      startedAt: NOW,
      lastActivityAt: NOW,
    });
    await db()
      .insert(lessonProgress)
      .values([row(a, "in_progress", 2), row(b, "completed", 4), row(c, "in_progress", 0)]);
    const pairs = JSON.stringify([
      [learner.id, a],
      [learner.id, b],
      [learner.id, c],
      [learner.id, a],
      ["usr_other", a],
      [learner.id, "les_unknown"],
    ]);
    const { results } = await d1().prepare(LESSONS_IN_PROGRESS_SQL).bind(pairs).all();
    expect(results).toEqual([
      {
        user_id: learner.id,
        lesson_id: a,
        course_id: course.courseId,
        items_done: 2,
        items_total: 4,
        last_activity_at: NOW,
      },
    ]);
  });

  it("reads attempts by id as the facts their statements are built from", async () => {
    const { learner } = await createTenant();
    const { attemptIds } = await recordAttempts(learner, 2, { score: 0.25 });
    const rows = await d1()
      .prepare(ATTEMPT_FACTS_SQL)
      .bind(JSON.stringify([...attemptIds, "att_unknown", attemptIds[0]]))
      .raw<AttemptFactRow>();
    const stored = await db().select().from(attempts).where(eq(attempts.userId, learner.id));
    // Each asked attempt once, unknown ids left out, with the same values as the whole row.
    expect(rows.map(attemptFactOf).sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual(
      stored
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map((a) => ({
          id: a.id,
          userId: a.userId,
          trainingItemId: a.trainingItemId,
          lessonId: a.lessonId,
          courseId: a.courseId,
          score: 0.25,
          correct: false,
          durationSeconds: 20,
          occurredAt: a.occurredAt,
          xpAwarded: a.xpAwarded,
        })),
    );
    expect(stored).toHaveLength(2);
    const plan = await d1()
      .prepare(`EXPLAIN QUERY PLAN ${ATTEMPT_FACTS_SQL}`)
      .bind("[]")
      .all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail).join("\n")).toMatch(
      /SEARCH attempts USING PRIMARY KEY \(id=\?\)/,
    );
  });

  it("stores a statement id once, makes only batches that got statements (claimed by their first attempt, or untried), and finds untried ones", async () => {
    const tenant = await createTenant();
    const endpointId = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    const [s1, s2, s3, s4, s5, s6] = [
      crypto.randomUUID(),
      crypto.randomUUID(),
      crypto.randomUUID(),
      crypto.randomUUID(),
      crypto.randomUUID(),
      crypto.randomUUID(),
    ];
    // Its changes count the statements it stored, an id given twice once.
    const twice = await insertStatements("xbt_0", [s6, s6]);
    expect(twice.meta.changes).toBe(1);
    // A first offer: every id new, so every batch is made with its entries as given, no key read.
    const firstOffer = await commitOffer(endpointId, [
      ["xbt_1", [s2, s1]],
      ["xbt_3", [s3]],
    ]);
    expect(firstOffer).toEqual({ stored: 3, made: ["xbt_1", "xbt_3"], rowsRead: expect.any(Number) });
    // Made claimed: its first attempt is the offer's own.
    const claimed = await commitOffer(endpointId, [["xbt_4", [s4]]], 1_800_000_000_000);
    expect(claimed).toMatchObject({ stored: 1, made: ["xbt_4"] });
    // The same facts offered again: nothing stored, no batch made.
    const again = await commitOffer(endpointId, [["xbt_2", [s1, s2]]]);
    expect(again).toMatchObject({ stored: 0, made: [] });
    // A batch of which one statement was stored before by another: only the other is its; a batch
    // whose statements were all stored before is not made.
    const partly = await commitOffer(endpointId, [
      ["xbt_5", [s1, s5]],
      ["xbt_6", [s2]],
    ]);
    expect(partly).toMatchObject({ stored: 1, made: ["xbt_5"] });
    // A first offer reads as much per batch whatever its statements (1 in 1 batch, 3 in 2): no key
    // and no entry is read again. An offer that met statements stored before reads, for each
    // statement, at least its entry and its key.
    expect(firstOffer.rowsRead).toBe(2 * claimed.rowsRead);
    expect(again.rowsRead - claimed.rowsRead).toBeGreaterThanOrEqual(2 * 2);
    expect(partly.rowsRead - firstOffer.rowsRead).toBeGreaterThanOrEqual(3 * 2);
    // Which of an offer's statements are keyed to their batch: those its insert stored.
    const keyed = (batches: [string, string[]][]) =>
      d1()
        .prepare(KEYED_TO_BATCHES_SQL)
        .bind(JSON.stringify(batches))
        .all<{ id: string }>()
        .then(({ results }) => results.map((r) => r.id).sort());
    expect(await keyed([["xbt_1", [s2, s1]]])).toEqual([s1, s2].sort());
    expect(
      await keyed([
        ["xbt_5", [s1, s5]],
        ["xbt_6", [s2]],
      ]),
    ).toEqual([s5]);
    const plan = async (sql: string, ...params: unknown[]) =>
      (
        await d1()
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .bind(...params)
          .all<{ detail: string }>()
      ).results
        .map((r) => r.detail)
        .join("\n");
    // Each statement's key by primary key (a statement has no index on its batch), never a scan.
    expect(await plan(KEYED_TO_BATCHES_SQL, "[]")).toMatch(/SEARCH k USING PRIMARY KEY \(id=\?\)/);
    const batchesPlan = await plan(INSERT_BATCHES_SQL, "[]", endpointId, NOW, null, 0);
    expect(batchesPlan).toMatch(/SEARCH k USING PRIMARY KEY \(id=\?\)/);
    expect(batchesPlan).not.toMatch(/SCAN k\b/);
    const rows = await db().select().from(xapiBatches).where(eq(xapiBatches.endpointId, endpointId));
    // Each batch carries its statements' facts as one JSON value, and no bodies.
    expect(
      rows
        .map((r) => [r.id, r.status, r.attemptCount, r.claimedUntil, JSON.parse(r.facts ?? "null"), r.bodies])
        .sort(),
    ).toEqual([
      ["xbt_1", "pending", 0, null, [fact(s2), fact(s1)], null],
      ["xbt_3", "pending", 0, null, [fact(s3)], null],
      // Made claimed: its first attempt is the offer's own.
      ["xbt_4", "pending", 1, 1_800_000_000_000, [fact(s4)], null],
      ["xbt_5", "pending", 0, null, [fact(s1), fact(s5)], null],
    ]);
    // Each holds the log entries of the statements it got, in the order given (the order they
    // happened), which share its pending state: no statement row at all.
    expect(
      rows.map((r) => [r.id, JSON.parse(r.entries), r.statementCount, r.logStatus, r.logAttempts]).sort(),
    ).toEqual([
      ["xbt_1", [entry(s2), entry(s1)], 2, "pending", 0],
      ["xbt_3", [entry(s3)], 1, "pending", 0],
      ["xbt_4", [entry(s4)], 1, "pending", 0],
      ["xbt_5", [entry(s5)], 1, "pending", 0],
    ]);
    expect(await statementRowsOf(endpointId)).toEqual([]);
    expect((await statementsOf(endpointId)).map((s) => [s.batchId, s.status])).toEqual(
      expect.arrayContaining([
        ["xbt_1", "pending"],
        ["xbt_3", "pending"],
      ]),
    );

    await db().update(xapiBatches).set({ attemptCount: 1 }).where(eq(xapiBatches.id, "xbt_3"));
    const unsent = await d1()
      .prepare(UNSENT_BATCHES_SQL)
      .bind(JSON.stringify([s1, s2, s3, s4]))
      .all<{ id: string }>();
    expect(unsent.results).toEqual([{ id: "xbt_1" }]);
  });

  it("records the batches an LRS accepted whole in one statement, each only while its attempt holds it", async () => {
    const tenant = await createTenant();
    const endpointId = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    const ids = {
      xbt_w1: [crypto.randomUUID(), crypto.randomUUID()],
      xbt_w2: [crypto.randomUUID()],
      xbt_w3: [crypto.randomUUID()],
    };
    await commitOffer(endpointId, Object.entries(ids), 1_800_000_000_000);
    // Another attempt holds the third: this record is stale for it.
    await db().update(xapiBatches).set({ attemptCount: 2 }).where(eq(xapiBatches.id, "xbt_w3"));
    const at = "2026-11-21T09:31:00Z";
    const written = await db().batch([
      recordSentBatchesQuery(db(), { batchIds: Object.keys(ids), attempt: 1, carried: 1, status: 200, at }),
    ]);
    expect(written[0].meta.changes).toBe(2);
    const rows = await db().select().from(xapiBatches).where(eq(xapiBatches.endpointId, endpointId));
    expect(
      rows
        .map((r) => [
          r.id,
          r.status,
          r.attemptCount,
          r.claimedUntil,
          r.logStatus,
          r.logAttempts,
          r.lastResponseStatus,
          r.completedAt,
          r.facts,
        ])
        .sort(),
    ).toEqual([
      ["xbt_w1", "succeeded", 1, null, "sent", 1, 200, at, null],
      ["xbt_w2", "succeeded", 1, null, "sent", 1, 200, at, null],
      [
        "xbt_w3",
        "pending",
        2,
        1_800_000_000_000,
        "pending",
        0,
        null,
        null,
        JSON.stringify(ids.xbt_w3.map(fact)),
      ],
    ]);
    // Their statements read as sent once, at that time, with no row of their own.
    const log = await statementsOf(endpointId);
    expect(log.filter((s) => s.batchId !== "xbt_w3").map((s) => [s.status, s.attempts, s.sentAt])).toEqual([
      ["sent", 1, at],
      ["sent", 1, at],
      ["sent", 1, at],
    ]);
    expect(await statementRowsOf(endpointId)).toEqual([]);
  });

  it("records an attempt's outcomes on each statement only while its claim holds, once", async () => {
    const tenant = await createTenant();
    const endpointId = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    const batchId = newId("xbt");
    const [sent, failed, pending] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await insertStatements(batchId, [sent, failed, pending]);
    // Its statements share its state: one earlier attempt stopped by a 503.
    await db()
      .insert(xapiBatches)
      .values({
        id: batchId,
        endpointId,
        status: "retrying",
        attemptCount: 2,
        facts: "[]",
        bodies: "[]",
        entries: JSON.stringify([sent, failed, pending].map(entry)),
        statementCount: 3,
        logStatus: "pending",
        logAttempts: 1,
        logError: "HTTP 503",
        createdAt: NOW,
      });
    expect((await statementsOf(endpointId)).map((s) => [s.status, s.attempts, s.lastError])).toEqual([
      ["pending", 1, "HTTP 503"],
      ["pending", 1, "HTTP 503"],
      ["pending", 1, "HTTP 503"],
    ]);
    const outcomes = [
      { id: sent, carried: 2, status: "sent" as const, error: null },
      { id: failed, carried: 2, status: "failed" as const, error: "HTTP 400: bad" },
      { id: pending, carried: 1, status: null, error: "HTTP 503" },
    ];
    // Outcomes that differ: each statement takes its own state (the batch's so far), then its outcome.
    // A stale attempt (the claim moved on) writes nothing.
    const record = async (attempt: number, at: string) =>
      db().batch([
        ownStateQuery(db(), batchId, attempt),
        ...recordStatementsQueries(db(), batchId, attempt, outcomes, at),
      ]);
    // One UPDATE per distinct outcome.
    expect(recordStatementsQueries(db(), batchId, 1, outcomes, NOW)).toHaveLength(3);
    await record(1, "2026-11-21T09:31:00Z");
    expect(await statementRowsOf(endpointId)).toEqual([]);

    await record(2, "2026-11-21T09:31:00Z");
    await record(2, "2026-11-21T09:32:00Z");
    await db().update(xapiBatches).set({ logStatus: null }).where(eq(xapiBatches.id, batchId));
    const byId = new Map((await statementsOf(endpointId)).map((s) => [s.id, s]));
    expect(byId.get(sent)).toMatchObject({
      status: "sent",
      attempts: 3,
      lastError: null,
      sentAt: "2026-11-21T09:31:00Z",
      completedAt: "2026-11-21T09:31:00Z",
    });
    expect(byId.get(failed)).toMatchObject({
      status: "failed",
      attempts: 3,
      lastError: "HTTP 400: bad",
      sentAt: null,
      completedAt: "2026-11-21T09:31:00Z",
    });
    // Still pending: counted twice (both writes held the claim), the error kept, nothing ended.
    expect(byId.get(pending)).toMatchObject({
      status: "pending",
      attempts: 3,
      lastError: "HTTP 503",
      completedAt: null,
    });
    // What the next attempt sends: the pending statements of batches whose statements hold their own state.
    expect(await pendingOfOwnStateBatchesQuery(db(), [batchId, "xbt_none"])).toEqual([
      { id: pending, batchId },
    ]);

    const dead = await d1()
      .prepare(FAIL_PENDING_OF_BATCHES_SQL)
      .bind(JSON.stringify([batchId]), "Dead-lettered", NOW)
      .run();
    expect(dead.meta.changes).toBe(1);
    expect((await statementsOf(endpointId)).find((s) => s.id === pending)).toMatchObject({
      status: "failed",
      attempts: 3,
      lastError: "Dead-lettered",
    });
    const cleared = await d1()
      .prepare(CLEAR_BODIES_OF_BATCHES_SQL)
      .bind(JSON.stringify([batchId]))
      .run();
    expect(cleared.meta.changes).toBe(1);
    expect(
      await db()
        .select({ facts: xapiBatches.facts, bodies: xapiBatches.bodies })
        .from(xapiBatches)
        .where(eq(xapiBatches.id, batchId)),
    ).toEqual([{ facts: null, bodies: null }]);
  });

  it("finds a batch's statements by primary key, off the ids it names, never by scanning the log", async () => {
    const plan = async (query: { sql: string; params: unknown[] }) =>
      (
        await d1()
          .prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
          .bind(...query.params)
          .all<{ detail: string }>()
      ).results
        .map((r) => r.detail)
        .join("\n");
    const plans = [
      await plan(pendingOfOwnStateBatchesQuery(db(), ["xbt_a", "xbt_b"]).toSQL()),

      await plan(failPendingQuery(db(), "xbt_a", 1, "endpoint disabled", NOW).toSQL()),
      await plan({ sql: FAIL_PENDING_OF_BATCHES_SQL, params: ['["xbt_a"]', "Dead-lettered", NOW] }),
    ];
    for (const detail of plans) {
      expect(detail).toMatch(/xapi_statements USING INDEX sqlite_autoindex_xapi_statements_1 \(id=\?\)/);
      expect(detail).not.toMatch(/SCAN xapi_statements\b/);
    }
  });

  it("reads the attempts named by the facts of batches that keep them", async () => {
    const tenant = await createTenant();
    const endpointId = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    const { attemptIds } = await recordAttempts(tenant.learner, 3);
    const batch = (id: string, facts: unknown[] | null) => ({
      id,
      endpointId,
      status: "pending" as const,
      facts: facts === null ? null : JSON.stringify(facts),
      createdAt: NOW,
    });
    const [a, b, c] = attemptIds as [string, string, string];
    await db()
      .insert(xapiBatches)
      .values([
        // An attempt by its id; the other facts are kept whole and name no attempt.
        batch("xbt_f1", [
          ["answered", a],
          { verb: "mastered", userId: tenant.learner.id, skill: "overall", level: "A1", at: NOW },
        ]),
        batch("xbt_f2", [
          ["answered", b],
          ["answered", "att_gone"],
        ]),
        batch("xbt_f3", [["answered", c]]),
        batch("xbt_f4", null),
      ]);
    const read = async (ids: string[]) =>
      (await attemptsOfBatchFactsQuery(db(), ids)).map((r) => r.id).sort();
    expect(await read(["xbt_f1", "xbt_f2", "xbt_f4", "xbt_none"])).toEqual([a, b].sort());
    expect((await attemptsOfBatchFactsQuery(db(), ["xbt_f3"]))[0]).toMatchObject({
      id: c,
      userId: tenant.learner.id,
    });
    expect(await read(["xbt_f4"])).toEqual([]);
  });

  it("fails the statements sharing a batch's pending state, each with the batch's requests (dead letter, endpoint off)", async () => {
    const tenant = await createTenant();
    const endpointId = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    const batch = (id: string, ids: string[], logStatus: "pending" | "sent") => ({
      id,
      endpointId,
      status: logStatus === "sent" ? ("succeeded" as const) : ("retrying" as const),
      attemptCount: 1,
      bodies: "[]",
      entries: JSON.stringify(ids.map(entry)),
      statementCount: ids.length,
      logStatus,
      logAttempts: 2,
      logError: logStatus === "sent" ? null : "HTTP 503",
      createdAt: NOW,
      completedAt: logStatus === "sent" ? NOW : null,
    });
    const [a, b, c, d, e] = [1, 2, 3, 4, 5].map(() => crypto.randomUUID()) as [
      string,
      string,
      string,
      string,
      string,
    ];
    const [dead, off, done] = [newId("xbt"), newId("xbt"), newId("xbt")];
    await insertStatements(dead, [a, b]);
    await insertStatements(off, [c, d]);
    await insertStatements(done, [e]);
    await db()
      .insert(xapiBatches)
      .values([batch(dead, [a, b], "pending"), batch(off, [c, d], "pending"), batch(done, [e], "sent")]);

    await d1().batch([
      d1()
        .prepare(OWN_STATE_OF_BATCHES_SQL)
        .bind(JSON.stringify([dead, done])),
      d1()
        .prepare(FAIL_PENDING_OF_BATCHES_SQL)
        .bind(JSON.stringify([dead, done]), "Dead-lettered", NOW),
      d1()
        .prepare(CLEAR_BODIES_OF_BATCHES_SQL)
        .bind(JSON.stringify([dead, done])),
    ]);
    // Held by attempt 1 only: a stale holder changes nothing.
    await db().batch([ownStateQuery(db(), off, 2), failPendingQuery(db(), off, 2, "endpoint disabled", NOW)]);
    expect((await statementRowsOf(endpointId)).filter((s) => s.batchId === off)).toEqual([]);
    await db().batch([ownStateQuery(db(), off, 1), failPendingQuery(db(), off, 1, "endpoint disabled", NOW)]);
    await db().update(xapiBatches).set({ logStatus: null }).where(eq(xapiBatches.id, off));

    const log = new Map((await statementsOf(endpointId)).map((s) => [s.id, s]));
    for (const id of [a, b])
      expect(log.get(id)).toMatchObject({
        status: "failed",
        attempts: 2,
        lastError: "Dead-lettered",
        completedAt: NOW,
      });
    for (const id of [c, d])
      expect(log.get(id)).toMatchObject({ status: "failed", attempts: 2, lastError: "endpoint disabled" });
    // A batch whose statements were all sent keeps them sent, on the batch.
    expect(log.get(e)).toMatchObject({ status: "sent", attempts: 2, lastError: null, sentAt: NOW });
    const logs = await db()
      .select({ id: xapiBatches.id, logStatus: xapiBatches.logStatus })
      .from(xapiBatches)
      .where(eq(xapiBatches.endpointId, endpointId));
    expect(new Map(logs.map((l) => [l.id, l.logStatus]))).toEqual(
      new Map([
        [dead, null],
        [off, null],
        [done, "sent"],
      ]),
    );
  });

  it("finds endpoints failing for 24 hours that were not told, and marks one run once", async () => {
    const tenant = await createTenant();
    const endpointId = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    const since = "2026-11-20T09:00:00Z";
    await updateEndpoint(endpointId, { failingSince: since, lastError: "HTTP 500" });
    const find = async (cutoff: string) =>
      (await d1().prepare(FAILING_ENDPOINTS_SQL).bind(cutoff, 1000).all<{ id: string }>()).results.filter(
        (r) => r.id === endpointId,
      );
    expect(await find("2026-11-20T08:59:59Z")).toEqual([]);
    expect(await find("2026-11-21T09:00:00Z")).toEqual([
      {
        id: endpointId,
        institution_id: tenant.institution.id,
        name: `LRS ${endpointId}`,
        failing_since: since,
        last_error: "HTTP 500",
      },
    ]);
    const mark = () => d1().prepare(MARK_FAILING_NOTIFIED_SQL).bind(endpointId, since, NOW).run();
    expect((await mark()).meta.changes).toBe(1);
    expect((await mark()).meta.changes).toBe(0);
    expect(await find("2026-11-21T09:00:00Z")).toEqual([]);
    // A new run (a success, then a failure later) is found again; a mark for the old run changes nothing.
    await updateEndpoint(endpointId, { failingSince: "2026-11-21T10:00:00Z" });
    expect((await mark()).meta.changes).toBe(0);
    expect(await find("2026-11-22T10:00:00Z")).toHaveLength(1);
    await updateEndpoint(endpointId, { enabled: false });
    expect(await find("2026-11-22T10:00:00Z")).toEqual([]);
  });

  it("purges finished batches after the log's window, with their statements' keys and rows, and nothing else", async () => {
    const tenant = await createTenant();
    const endpointId = await createEndpoint(tenant.institution.id, "http://127.0.0.1:9/lrs");
    const [shared, own, open, recent] = [newId("xbt"), newId("xbt"), newId("xbt"), newId("xbt")];
    const ids = Object.fromEntries(
      [shared, own, open, recent].map((b) => [b, [crypto.randomUUID(), crypto.randomUUID()]]),
    );
    const batch = (id: string, status: "succeeded" | "failed" | "retrying", createdAt: string) => ({
      id,
      endpointId,
      status,
      attemptCount: 1,
      entries: JSON.stringify((ids[id] as string[]).map(entry)),
      statementCount: 2,
      logStatus:
        status === "succeeded" ? ("sent" as const) : status === "retrying" ? ("pending" as const) : null,
      createdAt,
      completedAt: status === "retrying" ? null : createdAt,
    });
    for (const id of [shared, own, open, recent]) await insertStatements(id, ids[id] as string[]);
    await db()
      .insert(xapiBatches)
      .values([
        batch(shared, "succeeded", "2026-08-01T00:00:00Z"),
        batch(own, "failed", "2026-08-01T00:00:00Z"),
        batch(open, "retrying", "2026-08-01T00:00:00Z"),
        batch(recent, "succeeded", "2026-11-01T00:00:00Z"),
      ]);
    // The failed batch's statements hold their own state.
    await db()
      .insert(xapiStatements)
      .values(
        (ids[own] as string[]).map((id) => ({
          id,
          endpointId,
          batchId: own,
          verb: "answered" as const,
          activityId: `https://a.example/${id}`,
          userId: "usr_x",
          occurredAt: NOW,
          status: "failed" as const,
          createdAt: "2026-08-01T00:00:00Z",
          completedAt: "2026-08-01T00:00:00Z",
        })),
      );
    const cutoff = "2026-08-23T00:00:00Z";
    // Each endpoint's index, not a scan of every batch; the keys and rows by primary key.
    for (const statement of [PURGE_STATEMENT_KEYS_SQL, PURGE_STATEMENTS_SQL, PURGE_BATCHES_SQL]) {
      const plan = await d1()
        .prepare(`EXPLAIN QUERY PLAN ${statement}`)
        .bind(cutoff, 100)
        .all<{ detail: string }>();
      const detail = plan.results.map((r) => r.detail).join("\n");
      expect(detail).toContain("xapi_batches_endpoint_idx");
      expect(detail).not.toMatch(/SCAN (xapi_statement_keys|xapi_statements|b)\b/);
    }
    const [keys, rows, batches] = await d1().batch(
      [PURGE_STATEMENT_KEYS_SQL, PURGE_STATEMENTS_SQL, PURGE_BATCHES_SQL].map((q) =>
        d1().prepare(q).bind(cutoff, 100),
      ),
    );
    expect([keys?.meta.changes, rows?.meta.changes, batches?.meta.changes]).toEqual([4, 2, 2]);
    expect((await statementsOf(endpointId)).map((s) => s.batchId).sort()).toEqual(
      [open, open, recent, recent].sort(),
    );
    expect((await statementKeysOf(endpointId)).map((k) => k.batchId).sort()).toEqual(
      [open, open, recent, recent].sort(),
    );
    expect(await statementRowsOf(endpointId)).toEqual([]);
  });
});
