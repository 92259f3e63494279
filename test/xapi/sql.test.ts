import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { xapiBatches, xapiEndpoints, xapiStatements } from "../../src/db/schema";
import { CREATE_ENDPOINT_SQL, ENDPOINT_HEALTH_SQL, type EndpointHealthRow } from "../../src/domains/xapi/sql";
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
