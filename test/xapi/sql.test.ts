import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { xapiBatches, xapiEndpoints, xapiStatements } from "../../src/db/schema";
import {
  CREATE_ENDPOINT_SQL,
  ENDPOINT_HEALTH_SQL,
  type EndpointHealthRow,
  LOG_PAGE_SQL,
  LOG_TOTAL_SQL,
} from "../../src/domains/xapi/sql";
import { database } from "../../src/platform/db";
import { createTenant } from "../helpers/tenants";

// Each statement of src/domains/xapi/sql.ts against the test database, fixtures through drizzle.

const db = () => database(env.DB);

describe("CREATE_ENDPOINT_SQL", () => {
  it("inserts an endpoint while the institution is under the limit, and nothing at the limit", async () => {
    const { admin, institution } = await createTenant();
    const insert = (id: string, limit: number) =>
      env.DB.prepare(CREATE_ENDPOINT_SQL)
        .bind(
          id,
          institution.id,
          "LRS",
          "https://lrs.example.com/xapi/",
          "1.0.3",
          "oauth2",
          null,
          "https://auth.example.com/token",
          "client",
          "statements/write",
          "v2.sealed",
          JSON.stringify(["answered"]),
          "mbox",
          0,
          admin.id,
          "2026-11-01T00:00:00Z",
          limit,
        )
        .run();
    expect((await insert("xep_sql_a", 1)).meta.changes).toBe(1);
    expect((await insert("xep_sql_b", 1)).meta.changes).toBe(0);
    const rows = await db()
      .select()
      .from(xapiEndpoints)
      .where(eq(xapiEndpoints.institutionId, institution.id));
    expect(rows).toEqual([
      {
        id: "xep_sql_a",
        institutionId: institution.id,
        name: "LRS",
        endpoint: "https://lrs.example.com/xapi/",
        version: "1.0.3",
        authType: "oauth2",
        username: null,
        tokenUrl: "https://auth.example.com/token",
        clientId: "client",
        scope: "statements/write",
        secretSealed: "v2.sealed",
        credentialsVersion: 1,
        activities: ["answered"],
        actorFormat: "mbox",
        enabled: false,
        lastSuccessAt: null,
        lastErrorAt: null,
        lastError: null,
        failingSince: null,
        failingNotifiedAt: null,
        createdBy: admin.id,
        createdAt: "2026-11-01T00:00:00Z",
        updatedAt: "2026-11-01T00:00:00Z",
      },
    ]);
  });
});

describe("ENDPOINT_HEALTH_SQL", () => {
  it("counts sent and failed since the window's start and every pending statement, per endpoint", async () => {
    const { institution } = await createTenant();
    const endpoint = (id: string) => ({
      id,
      institutionId: institution.id,
      name: id,
      endpoint: "https://lrs.example.com/xapi/",
      version: "1.0.3" as const,
      authType: "basic" as const,
      username: "u",
      secretSealed: "v2.sealed",
      activities: ["answered" as const],
      enabled: true,
      createdAt: "2026-11-01T00:00:00Z",
      updatedAt: "2026-11-01T00:00:00Z",
    });
    await db()
      .insert(xapiEndpoints)
      .values([endpoint("xep_h_a"), endpoint("xep_h_b"), endpoint("xep_h_c")]);
    const statement = (
      endpointId: string,
      status: "pending" | "sent" | "failed",
      completedAt: string | null,
    ) => ({
      id: crypto.randomUUID(),
      endpointId,
      verb: "answered" as const,
      activityId: "https://api.lingua.test/xapi/activities/training-items/x",
      userId: "usr_x",
      occurredAt: "2026-11-01T00:00:00Z",
      status,
      createdAt: "2026-11-01T00:00:00Z",
      completedAt,
    });
    await db()
      .insert(xapiStatements)
      .values([
        statement("xep_h_a", "sent", "2026-11-20T10:00:00Z"),
        statement("xep_h_a", "sent", "2026-11-20T09:00:00Z"),
        statement("xep_h_a", "sent", "2026-11-19T09:00:00Z"),
        statement("xep_h_a", "failed", "2026-11-20T09:30:00Z"),
        statement("xep_h_a", "failed", "2026-11-18T09:30:00Z"),
        statement("xep_h_a", "pending", null),
        statement("xep_h_a", "pending", null),
        statement("xep_h_b", "pending", null),
      ]);
    // Statements sharing their batch's state count on the batch: 50 sent in the window, 50 before
    // it, 7 pending; the rows of the batches' statements hold no state of their own.
    const batch = (
      id: string,
      endpointId: string,
      logStatus: "pending" | "sent",
      count: number,
      completedAt: string | null,
    ) => ({
      id,
      endpointId,
      status: logStatus === "sent" ? ("succeeded" as const) : ("pending" as const),
      statementCount: count,
      logStatus,
      createdAt: "2026-11-01T00:00:00Z",
      completedAt,
    });
    await db()
      .insert(xapiBatches)
      .values([
        batch("xbt_h_1", "xep_h_a", "sent", 50, "2026-11-20T09:10:00Z"),
        batch("xbt_h_2", "xep_h_a", "sent", 50, "2026-11-19T09:10:00Z"),
        batch("xbt_h_3", "xep_h_b", "pending", 7, null),
        { ...batch("xbt_h_4", "xep_h_b", "sent", 3, "2026-11-20T09:10:00Z"), logStatus: null },
      ]);
    const { results } = await env.DB.prepare(ENDPOINT_HEALTH_SQL)
      .bind(JSON.stringify(["xep_h_a", "xep_h_b", "xep_h_c"]), "2026-11-20T09:00:00Z")
      .all<EndpointHealthRow>();
    expect([...results].sort((x, y) => x.endpoint_id.localeCompare(y.endpoint_id))).toEqual([
      { endpoint_id: "xep_h_a", sent: 52, failed: 1, pending: 2 },
      { endpoint_id: "xep_h_b", sent: 0, failed: 0, pending: 8 },
      { endpoint_id: "xep_h_c", sent: 0, failed: 0, pending: 0 },
    ]);
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${ENDPOINT_HEALTH_SQL}`)
      .bind("[]", "2026-11-20T09:00:00Z")
      .all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail).join("\n");
    expect(details).toMatch(/xapi_statements_health_idx/);
    expect(details).toMatch(/xapi_batches_log_idx/);
    expect(details).not.toMatch(/SCAN [sb]\b/);
  });
});

describe("LOG_PAGE_SQL and LOG_TOTAL_SQL", () => {
  const explain = async (query: string, params: unknown[]) =>
    (
      await env.DB.prepare(`EXPLAIN QUERY PLAN ${query}`)
        .bind(...params)
        .all<{ detail: string }>()
    ).results
      .map((r) => r.detail)
      .join("\n");

  it("reads a mixed log: sharing batches from their entries, the others from their rows, newest first", async () => {
    const { institution } = await createTenant();
    const endpointId = `xep_log_${crypto.randomUUID()}`;
    await db()
      .insert(xapiEndpoints)
      .values({
        id: endpointId,
        institutionId: institution.id,
        name: "log",
        endpoint: "https://lrs.example.com/xapi/",
        version: "1.0.3",
        authType: "basic",
        username: "u",
        secretSealed: "v2.sealed",
        activities: ["answered"],
        enabled: true,
        createdAt: "2026-11-01T00:00:00Z",
        updatedAt: "2026-11-01T00:00:00Z",
      });
    const entry = (id: string, verb: string) => [
      id,
      verb,
      `https://a.example/${id}`,
      "usr_x",
      "2026-11-01T00:00:00Z",
    ];
    // An older batch whose statements share its `sent` state; a newer one that does not (one
    // rejected, one sent), its statements on their rows.
    await db()
      .insert(xapiBatches)
      .values([
        {
          id: "xbt_log_1",
          endpointId,
          status: "succeeded",
          entries: JSON.stringify([entry("s1", "answered"), entry("s2", "completed")]),
          statementCount: 2,
          logStatus: "sent",
          logAttempts: 1,
          createdAt: "2026-11-01T00:00:00Z",
          completedAt: "2026-11-01T00:00:01Z",
        },
        {
          id: "xbt_log_2",
          endpointId,
          status: "succeeded",
          entries: JSON.stringify([entry("s3", "answered"), entry("s4", "answered")]),
          statementCount: 2,
          logStatus: null,
          createdAt: "2026-11-02T00:00:00Z",
          completedAt: "2026-11-02T00:00:01Z",
        },
      ]);
    const own = (id: string, status: "sent" | "failed") => ({
      id,
      endpointId,
      batchId: "xbt_log_2",
      verb: "answered" as const,
      activityId: `https://a.example/${id}`,
      userId: "usr_x",
      occurredAt: "2026-11-01T00:00:00Z",
      status,
      attempts: 2,
      lastError: status === "failed" ? "HTTP 400: no" : null,
      sentAt: status === "sent" ? "2026-11-02T00:00:01Z" : null,
      createdAt: "2026-11-02T00:00:00Z",
      completedAt: "2026-11-02T00:00:01Z",
    });
    await db()
      .insert(xapiStatements)
      .values([own("s3", "failed"), own("s4", "sent")]);
    const page = async (status: string | null, verb: string | null, limit = 10, offset = 0) => {
      const [rows, total] = await env.DB.batch<Record<string, unknown>>([
        env.DB.prepare(LOG_PAGE_SQL).bind(endpointId, status, verb, limit, offset),
        env.DB.prepare(LOG_TOTAL_SQL).bind(endpointId, status, verb),
      ]);
      return [rows?.results.map((r) => [r.id, r.status, r.attempts]), total?.results[0]?.total];
    };
    expect(await page(null, null)).toEqual([
      [
        ["s4", "sent", 2],
        ["s3", "failed", 2],
        ["s2", "sent", 1],
        ["s1", "sent", 1],
      ],
      4,
    ]);
    expect(await page("sent", null)).toEqual([
      [
        ["s4", "sent", 2],
        ["s2", "sent", 1],
        ["s1", "sent", 1],
      ],
      3,
    ]);
    expect(await page("failed", "answered")).toEqual([[["s3", "failed", 2]], 1]);
    expect(await page("pending", null)).toEqual([[], 0]);
    expect(await page(null, "answered", 2, 1)).toEqual([
      [
        ["s3", "failed", 2],
        ["s1", "sent", 1],
      ],
      3,
    ]);
    const [first] = (await env.DB.prepare(LOG_PAGE_SQL).bind(endpointId, null, null, 1, 0).all()).results;
    expect(first).toEqual({
      id: "s4",
      verb: "answered",
      activity_id: "https://a.example/s4",
      user_id: "usr_x",
      occurred_at: "2026-11-01T00:00:00Z",
      status: "sent",
      attempts: 2,
      last_error: null,
      sent_at: "2026-11-02T00:00:01Z",
      created_at: "2026-11-02T00:00:00Z",
    });
  });

  it("walks the endpoint's batches in the log's order and finds a row by primary key, never scanning", async () => {
    const page = await explain(LOG_PAGE_SQL, ["xep_x", null, null, 25, 0]);
    expect(page).toMatch(/xapi_batches_endpoint_idx/);
    expect(page).toMatch(/SEARCH s USING INDEX sqlite_autoindex_xapi_statements_1 \(id=\?\)/);
    expect(page).not.toMatch(/SCAN (b|s)\b/);
    for (const params of [
      ["xep_x", null, null],
      ["xep_x", "sent", null],
    ]) {
      const total = await explain(LOG_TOTAL_SQL, params);
      expect(total).toMatch(/xapi_batches_endpoint_idx|xapi_batches_log_idx/);
      expect(total).not.toMatch(/SCAN (b|s|xapi_batches|xapi_statements)\b/);
    }
  });
});
