import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { listStatements } from "../../src/domains/xapi/forwarding-log";
import { healthOf } from "../../src/domains/xapi/health";
import { createTenant } from "../helpers/tenants";
import { createEndpoint, heldContext, statementKeysOf } from "./support";

// Migration 0051 (`_xapi_packed_log.sql`, docs/design/xapi-forwarding.md "The log packed per batch")
// run over rows of the former tables, as a database of before holds them: the log, the health and
// the keys answer what the rows said.

const migration = (suffix: string) => {
  const [found] = env.TEST_MIGRATIONS.filter((m) => m.name.endsWith(suffix));
  if (!found) throw new Error(`migration ${suffix} not found`);
  return found;
};
const touchesFormerTables = (q: string) => /xapi_batches|xapi_statements/.test(q);
const run = (queries: string[]) => env.DB.batch(queries.map((q) => env.DB.prepare(q)));

/** xapi_batches and xapi_statements as the migrations before 0051 left them (no keys table). */
async function formerTables() {
  await run(["DROP TABLE xapi_statement_keys", "DROP TABLE xapi_statements", "DROP TABLE xapi_batches"]);
  const created = migration("_xapi.sql").queries.filter(
    (q) =>
      /^\s*CREATE (TABLE|INDEX) `xapi_(batches|statements)/.test(q) ||
      /ON `xapi_(batches|statements)`/.test(q),
  );
  expect(created).toHaveLength(7);
  await run(created);
  for (const suffix of ["_xapi_batch_bodies.sql", "_xapi_batch_log.sql", "_xapi_batch_facts.sql"])
    await run(migration(suffix).queries.filter(touchesFormerTables));
}

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("migration 0051: the forwarding log packed per batch, over rows of before", () => {
  it("answers the log, the health and the keys as the former rows did, for batches of each state", async () => {
    const { ctx } = heldContext();
    const { institution } = await createTenant();
    const endpoint = { id: await createEndpoint(institution.id, "https://lrs.example.com/xapi") };
    await formerTables();

    const now = Date.now();
    const at = (hoursAgo: number) => iso(now - hoursAgo * HOUR);
    const activity = (n: number) => `https://api.lingua.test/xapi/activities/training-items/itm_${n}`;
    // Batches, oldest first: each one's state, shared by its statements (log_status) or not (null).
    const batches = [
      // Sent, its two statements sharing it.
      { id: "xbt_m_1", status: "succeeded", log: "sent", logAttempts: 1, logError: null, completed: at(2) },
      // Untried and open, made when batches kept facts.
      { id: "xbt_m_2", status: "pending", log: "pending", logAttempts: 0, logError: null, completed: null },
      // Retrying after a 503: its statement still pending, with the error.
      {
        id: "xbt_m_3",
        status: "retrying",
        log: "pending",
        logAttempts: 1,
        logError: "HTTP 503",
        completed: null,
      },
      // Finished with statements of their own: one sent, one the LRS rejected.
      { id: "xbt_m_4", status: "succeeded", log: null, logAttempts: 0, logError: null, completed: at(1) },
      // Open and made before facts were kept: sent from its bodies.
      { id: "xbt_m_5", status: "pending", log: "pending", logAttempts: 0, logError: null, completed: null },
    ];
    const statements = [
      // [id, batch, verb, activity, occurred (hours ago), own status, attempts, last_error, sent_at, completed_at]
      [
        "00000000-0000-5000-8000-000000000001",
        "xbt_m_1",
        "answered",
        activity(1),
        5,
        null,
        0,
        null,
        null,
        null,
      ],
      [
        "00000000-0000-5000-8000-000000000002",
        "xbt_m_1",
        "completed",
        activity(2),
        4,
        null,
        0,
        null,
        null,
        null,
      ],
      [
        "00000000-0000-5000-8000-000000000003",
        "xbt_m_2",
        "answered",
        activity(3),
        3,
        null,
        0,
        null,
        null,
        null,
      ],
      [
        "00000000-0000-5000-8000-000000000004",
        "xbt_m_3",
        "progressed",
        activity(4),
        3,
        null,
        0,
        null,
        null,
        null,
      ],
      [
        "00000000-0000-5000-8000-000000000005",
        "xbt_m_4",
        "answered",
        activity(5),
        2,
        "sent",
        1,
        null,
        at(1),
        at(1),
      ],
      [
        "00000000-0000-5000-8000-000000000006",
        "xbt_m_4",
        "answered",
        activity(6),
        2,
        "failed",
        1,
        "HTTP 400: bad score",
        null,
        at(1),
      ],
      [
        "00000000-0000-5000-8000-000000000007",
        "xbt_m_5",
        "earned",
        activity(7),
        1,
        null,
        0,
        null,
        null,
        null,
      ],
    ] as const;
    await run(
      batches.map(
        (b, i) =>
          `INSERT INTO xapi_batches (id, endpoint_id, status, attempt_count, created_at, completed_at, statement_ids, statement_count, log_status, log_attempts, log_error, facts, bodies) VALUES ('${b.id}', '${endpoint.id}', '${b.status}', ${b.logAttempts}, '${at(10 - i)}', ${b.completed ? `'${b.completed}'` : "NULL"}, '${JSON.stringify(statements.filter((s) => s[1] === b.id).map((s) => s[0]))}', ${statements.filter((s) => s[1] === b.id).length}, ${b.log ? `'${b.log}'` : "NULL"}, ${b.logAttempts}, ${b.logError ? `'${b.logError}'` : "NULL"}, ${b.id === "xbt_m_2" ? `'[["answered","att_3"]]'` : "NULL"}, ${b.id === "xbt_m_5" ? `'[{"id":"00000000-0000-5000-8000-000000000007"}]'` : "NULL"})`,
      ),
    );
    await env.DB.batch(
      statements.map((s) =>
        env.DB.prepare(
          "INSERT INTO xapi_statements (id, endpoint_id, batch_id, verb, activity_id, user_id, occurred_at, status, attempts, last_error, sent_at, created_at, completed_at) VALUES (?, ?, ?, ?, ?, 'usr_m', ?, ?, ?, ?, ?, ?, ?)",
        ).bind(s[0], endpoint.id, s[1], s[2], s[3], at(s[4]), s[5], s[6], s[7], s[8], at(10), s[9]),
      ),
    );

    await run(migration("_xapi_packed_log.sql").queries);

    // Each statement as the former rows said: its batch's state where it shared it, else its own.
    const batchOf = (id: string) => batches.find((b) => b.id === id)!;
    const expected = statements.map((s) => {
      const b = batchOf(s[1]);
      return {
        id: s[0],
        verb: s[2],
        activityId: s[3],
        userId: "usr_m",
        occurredAt: at(s[4]),
        status: b.log ?? s[5],
        attempts: b.log ? b.logAttempts : s[6],
        lastError: b.log ? b.logError : s[7],
        sentAt: b.log ? (b.log === "sent" ? b.completed : null) : s[8],
        createdAt: at(10 - batches.indexOf(b)),
      };
    });
    // Newest batch first, the latest-happened first within a batch.
    const newestFirst = [...expected].reverse();
    const page = { page: 1, per_page: 100 };
    const log = await listStatements(ctx, { endpointId: endpoint.id, page });
    expect(log).toEqual({ rows: newestFirst, total: 7 });
    for (const status of ["pending", "sent", "failed"] as const) {
      const some = await listStatements(ctx, { endpointId: endpoint.id, status, page });
      expect(some.rows, status).toEqual(newestFirst.filter((e) => e.status === status));
      expect(some.total, status).toBe(some.rows.length);
    }
    const answered = await listStatements(ctx, { endpointId: endpoint.id, verb: "answered", page });
    expect(answered.rows.map((r) => r.id)).toEqual(
      newestFirst.filter((e) => e.verb === "answered").map((e) => e.id),
    );

    expect(await healthOf(ctx, endpoint.id)).toEqual({ sent: 3, failed: 1, pending: 3 });

    // Every statement keyed to the batch that stored it.
    const keys = await statementKeysOf(endpoint.id);
    expect(new Map(keys.map((k) => [k.id, k.batchId]))).toEqual(new Map(statements.map((s) => [s[0], s[1]])));
    // What was open stays open, its facts or bodies kept: a batch of before is still sent.
    const { results: open } = await env.DB.prepare(
      "SELECT id, status, facts IS NOT NULL AS has_facts, bodies IS NOT NULL AS has_bodies FROM xapi_batches WHERE status IN ('pending', 'retrying') ORDER BY id",
    ).all();
    expect(open).toEqual([
      { id: "xbt_m_2", status: "pending", has_facts: 1, has_bodies: 0 },
      { id: "xbt_m_3", status: "retrying", has_facts: 0, has_bodies: 0 },
      { id: "xbt_m_5", status: "pending", has_facts: 0, has_bodies: 1 },
    ]);
  });
});
