import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiTokens } from "../../src/db/schema";
import {
  INSERT_API_TOKEN_UNDER_LIMIT_SQL,
  SURPLUS_SESSIONS_SQL,
  type SurplusSessionRow,
  TOKEN_PAGE_SQL,
  type TokenPageRow,
} from "../../src/domains/tokens/sql";
import { database } from "../../src/platform/db";
import { createTenant } from "../helpers/tenants";

const db = () => database(env.DB);
let sequence = 0;

async function insertToken(
  user: { id: string },
  institutionId: string,
  kind: "api" | "session",
  createdAt: string,
  fields: Partial<typeof apiTokens.$inferInsert> = {},
) {
  sequence += 1;
  const row = {
    id: `tok_sql_${sequence}`,
    userId: user.id,
    institutionId,
    kind,
    name: `t${sequence}`,
    tokenHash: `hash_sql_${sequence}_${Math.random()}`,
    prefix: "lng_x",
    abilities: ["content:read"],
    createdAt,
    ...fields,
  };
  await db().insert(apiTokens).values(row);
  return row;
}

describe("TOKEN_PAGE_SQL", () => {
  it("pages a user's active tokens newest first in the wire shape, with the total", async () => {
    const { learner, institution } = await createTenant();
    const a = await insertToken(learner, institution.id, "api", "2026-03-01T00:00:00.000Z");
    const b = await insertToken(learner, institution.id, "api", "2026-03-02T00:00:00.000Z");
    await insertToken(learner, institution.id, "api", "2026-03-03T00:00:00.000Z", {
      revokedAt: "2026-03-04T00:00:00.000Z",
    });
    const row = await env.DB.prepare(TOKEN_PAGE_SQL.user_id.byKind)
      .bind(learner.id, 10, 0, "api")
      .first<TokenPageRow>();
    // The tenant's learner also holds the session createTenant signed in with: not an API token.
    expect(row?.total).toBe(2);
    const items = JSON.parse(row?.data ?? "[]");
    expect(items.map((t: { id: string }) => t.id)).toEqual([b.id, a.id]);
    expect(Object.keys(items[0])).toEqual([
      "id",
      "name",
      "kind",
      "abilities",
      "prefix",
      "user_id",
      "created_at",
      "last_used_at",
      "expires_at",
    ]);
    expect(items[0].abilities).toEqual(["content:read"]);
  });

  it("scopes by institution and honours limit and offset", async () => {
    const { learner, instructor, institution } = await createTenant();
    await insertToken(learner, institution.id, "api", "2026-03-01T00:00:00.000Z");
    const newest = await insertToken(instructor, institution.id, "api", "2026-03-05T00:00:00.000Z");
    const row = await env.DB.prepare(TOKEN_PAGE_SQL.institution_id.byKind)
      .bind(institution.id, 1, 0, "api")
      .first<TokenPageRow>();
    expect(row?.total).toBe(2);
    expect(JSON.parse(row?.data ?? "[]").map((t: { id: string }) => t.id)).toEqual([newest.id]);
    const all = await env.DB.prepare(TOKEN_PAGE_SQL.institution_id.all)
      .bind(institution.id, 100, 0)
      .first<TokenPageRow>();
    // Both API tokens and the three sessions createTenant signed in with.
    expect(all?.total).toBe(5);
  });
});

describe("INSERT_API_TOKEN_UNDER_LIMIT_SQL", () => {
  it("inserts below the limit and changes nothing at it, counting only live API tokens", async () => {
    const { learner, institution } = await createTenant();
    await insertToken(learner, institution.id, "api", "2026-03-01T00:00:00.000Z");
    await insertToken(learner, institution.id, "api", "2026-03-01T00:00:00.000Z", {
      expiresAt: "2026-03-02T00:00:00.000Z",
    });
    const insert = (id: string, limit: number) =>
      env.DB.prepare(INSERT_API_TOKEN_UNDER_LIMIT_SQL)
        .bind(
          id,
          learner.id,
          institution.id,
          "n",
          `h_${id}`,
          "lng_x",
          '["*"]',
          "2026-04-01T00:00:00.000Z",
          null,
          limit,
        )
        .run();
    expect((await insert("tok_sql_limit_a", 2)).meta.changes).toBe(1);
    expect((await insert("tok_sql_limit_b", 2)).meta.changes).toBe(0);
    const stored = await db().select().from(apiTokens).where(eq(apiTokens.id, "tok_sql_limit_a")).get();
    expect(stored).toMatchObject({ kind: "api", abilities: ["*"], userId: learner.id, revokedAt: null });
    expect(
      await db().select().from(apiTokens).where(eq(apiTokens.id, "tok_sql_limit_b")).get(),
    ).toBeUndefined();
  });
});

describe("SURPLUS_SESSIONS_SQL", () => {
  it("lists the live sessions beyond the newest N, newest of them first", async () => {
    const { learner, institution } = await createTenant();
    const old = await insertToken(learner, institution.id, "session", "2020-01-01T00:00:00.000Z");
    const older = await insertToken(learner, institution.id, "session", "2019-01-01T00:00:00.000Z");
    await insertToken(learner, institution.id, "session", "2018-01-01T00:00:00.000Z", {
      expiresAt: "2018-02-01T00:00:00.000Z",
    });
    // Newest: the sign-in session of createTenant; keep 1, so the two old live ones are surplus.
    const { results } = await env.DB.prepare(SURPLUS_SESSIONS_SQL)
      .bind(learner.id, new Date().toISOString(), 1)
      .all<SurplusSessionRow>();
    expect(results).toEqual([
      { id: old.id, token_hash: old.tokenHash },
      { id: older.id, token_hash: older.tokenHash },
    ]);
  });
});
