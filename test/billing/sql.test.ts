import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { billingAccounts, institutions, stripeEvents } from "../../src/db/schema";
import {
  CLAIM_EVENT_SQL,
  INSTITUTION_FOLLOWS_SQL,
  MARK_EVENT_PROCESSED_IF_CHANGED_SQL,
  MARK_EVENT_PROCESSED_SQL,
  RELEASE_EVENT_SQL,
} from "../../src/domains/billing/sql";
import { database } from "../../src/platform/db";
import { createTenant } from "../helpers/tenants";

// Each statement of src/domains/billing/sql.ts against the test database, fixtures through drizzle.

const db = () => database(env.DB);
const T0 = "2026-11-21T09:30:00.000Z";
const T1 = "2026-11-21T09:30:30.000Z";
const T2 = "2026-11-21T09:32:00.000Z";

const eventRow = (id: string) => db().select().from(stripeEvents).where(eq(stripeEvents.id, id)).get();
const claim = (id: string, at: string, staleBefore: string) =>
  env.DB.prepare(CLAIM_EVENT_SQL).bind(id, "invoice.paid", at, staleBefore).run();

describe("CLAIM_EVENT_SQL and RELEASE_EVENT_SQL", () => {
  it("inserts a new event claimed; refuses a fresh claim; takes over a stale one; never a processed one", async () => {
    expect((await claim("evt_sql_a", T0, "2026-11-21T09:29:00.000Z")).meta.changes).toBe(1);
    expect(await eventRow("evt_sql_a")).toEqual({
      id: "evt_sql_a",
      type: "invoice.paid",
      institutionId: null,
      receivedAt: T0,
      claimedAt: T0,
      processedAt: null,
    });
    // Another delivery 30 s later, while the claim (held until 60 s) is fresh.
    expect((await claim("evt_sql_a", T1, "2026-11-21T09:29:30.000Z")).meta.changes).toBe(0);
    // Two minutes later the claim is stale: taken over; received_at stays the first delivery's.
    expect((await claim("evt_sql_a", T2, "2026-11-21T09:31:00.000Z")).meta.changes).toBe(1);
    expect(await eventRow("evt_sql_a")).toMatchObject({ receivedAt: T0, claimedAt: T2 });
    // Released by its holder (only its own claim): claimable at once.
    expect((await env.DB.prepare(RELEASE_EVENT_SQL).bind("evt_sql_a", T0).run()).meta.changes).toBe(0);
    expect((await env.DB.prepare(RELEASE_EVENT_SQL).bind("evt_sql_a", T2).run()).meta.changes).toBe(1);
    expect((await claim("evt_sql_a", T2, "2026-11-21T09:31:00.000Z")).meta.changes).toBe(1);
    // Processed: never claimed again.
    await env.DB.prepare(MARK_EVENT_PROCESSED_SQL).bind("evt_sql_a", T2, null).run();
    expect(
      (await claim("evt_sql_a", "2026-11-22T00:00:00.000Z", "2026-11-21T23:59:00.000Z")).meta.changes,
    ).toBe(0);
  });
});

describe("MARK_EVENT_PROCESSED_SQL", () => {
  it("marks once, with the institution", async () => {
    const { institution } = await createTenant();
    await claim("evt_sql_b", T0, T0);
    const mark = () => env.DB.prepare(MARK_EVENT_PROCESSED_SQL).bind("evt_sql_b", T1, institution.id).run();
    expect((await mark()).meta.changes).toBe(1);
    expect((await mark()).meta.changes).toBe(0);
    expect(await eventRow("evt_sql_b")).toMatchObject({ processedAt: T1, institutionId: institution.id });
  });
});

describe("INSTITUTION_FOLLOWS_SQL and MARK_EVENT_PROCESSED_IF_CHANGED_SQL", () => {
  async function tenantWithAccount(plan: "free" | "pro" | "enterprise") {
    const { institution } = await createTenant({
      plan,
      ...(plan === "enterprise" ? { rateLimit: 5000 } : {}),
    });
    await db()
      .insert(billingAccounts)
      .values({ institutionId: institution.id, stripeCustomerId: `cus_sql_${institution.id}`, syncedAt: T0 });
    return institution.id;
  }
  /** The chain as the sync runs it: the account's conditional write, the institution, the event's mark. */
  async function chain(institutionId: string, eventId: string, syncedAtWas: string) {
    // The account's write as the sync builds it (drizzle), conditional on the synced_at it read.
    const account = db()
      .update(billingAccounts)
      .set({ syncedAt: T2 })
      .where(and(eq(billingAccounts.institutionId, institutionId), eq(billingAccounts.syncedAt, syncedAtWas)))
      .toSQL();
    return env.DB.batch([
      env.DB.prepare(account.sql).bind(...account.params),
      env.DB.prepare(INSTITUTION_FOLLOWS_SQL).bind(institutionId, "pro", 12, T2),
      env.DB.prepare(MARK_EVENT_PROCESSED_IF_CHANGED_SQL).bind(eventId, T2, institutionId),
    ]);
  }
  const institutionRow = (id: string) =>
    db().select().from(institutions).where(eq(institutions.id, id)).get();

  it("follows the subscription and marks the event when the account's write took", async () => {
    const id = await tenantWithAccount("free");
    await claim("evt_sql_c", T0, T0);
    const [, follows, mark] = await chain(id, "evt_sql_c", T0);
    expect(follows!.meta.changes).toBe(1);
    expect(mark!.meta.changes).toBe(1);
    expect(await institutionRow(id)).toMatchObject({
      plan: "pro",
      seats: 12,
      rateLimitPerMinute: null,
      updatedAt: T2,
    });
  });

  it("changes nothing when the account's write lost its race", async () => {
    const id = await tenantWithAccount("free");
    await claim("evt_sql_d", T0, T0);
    const [account, follows, mark] = await chain(id, "evt_sql_d", "2026-01-01T00:00:00.000Z");
    expect(account!.meta.changes).toBe(0);
    expect(follows!.meta.changes).toBe(0);
    expect(mark!.meta.changes).toBe(0);
    expect(await institutionRow(id)).toMatchObject({ plan: "free", seats: null });
    expect((await eventRow("evt_sql_d"))?.processedAt).toBeNull();
  });

  it("leaves an Enterprise contract as it is, but still lets the chain go on", async () => {
    const id = await tenantWithAccount("enterprise");
    const before = await institutionRow(id);
    await claim("evt_sql_e", T0, T0);
    const [, follows, mark] = await chain(id, "evt_sql_e", T0);
    expect(follows!.meta.changes).toBe(1);
    expect(mark!.meta.changes).toBe(1);
    expect(await institutionRow(id)).toMatchObject({
      plan: "enterprise",
      seats: before!.seats,
      rateLimitPerMinute: 5000,
      updatedAt: before!.updatedAt,
    });
  });
});
