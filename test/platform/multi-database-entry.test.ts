import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  billingAccounts,
  directoryKeys,
  institutions,
  scimTokens,
  stripeEvents,
  users,
} from "../../src/db/schema";
import { sha256Hex } from "../../src/platform/crypto/encoding";
import { database } from "../../src/platform/db";
import { startCheckout } from "../billing/support";
import { call } from "../helpers/api";
import { completeCheckout, deliver, stripeDeliveries } from "../helpers/stripe";
import { createTenant, type Tenant } from "../helpers/tenants";
import { issueScimToken, scim, USER_SCHEMA, uniqueEmail } from "../scim/support";

/**
 * The entry points that find an institution by something other than an API token, an e-mail or an
 * invitation (docs/design/multi-database.md#entry-points): SCIM tokens, Stripe's webhook, SSO by
 * verified domain, LTI. Acme lives in DB, Globex in DB_1; each flow runs for Globex over HTTP, and
 * what it writes lands in DB_1, with only the directory's keys in DB.
 */
let acme: Tenant;
let globex: Tenant;

beforeAll(async () => {
  [acme, globex] = await Promise.all([createTenant(), createTenant({ database: "DB_1" })]);
});

const inDb = (name: "DB" | "DB_1") => database(env[name]);

async function keysOf(institutionId: string, kind: string) {
  const rows = await inDb("DB")
    .select()
    .from(directoryKeys)
    .where(eq(directoryKeys.institutionId, institutionId))
    .all();
  return rows.filter((row) => row.kind === kind).map((row) => row.key);
}

describe("SCIM for an institution in DB_1", () => {
  it("finds the token by its directory key, provisions and lists members in DB_1, and forgets a revoked token", async () => {
    const { token, id } = await issueScimToken(globex);
    const hash = await sha256Hex(token);
    expect(await keysOf(globex.institution.id, "scim_token")).toEqual([hash]);
    expect(await inDb("DB").select().from(scimTokens).where(eq(scimTokens.id, id)).all()).toEqual([]);

    const email = uniqueEmail("scim-db1");
    const created = await scim("/Users", {
      token,
      body: { schemas: [USER_SCHEMA], userName: email, name: { givenName: "Ada", familyName: "Lovelace" } },
    });
    expect(created.res.status).toBe(201);
    const there = await inDb("DB_1").select().from(users).where(eq(users.email, email)).get();
    expect(there?.institutionId).toBe(globex.institution.id);
    expect(await inDb("DB").select().from(users).where(eq(users.email, email)).all()).toEqual([]);
    expect(await keysOf(globex.institution.id, "email")).toContain(email);

    const listed = await scim(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`, { token });
    expect(listed.res.status).toBe(200);
    expect(listed.body.Resources.map((u: { id: string }) => u.id)).toEqual([created.body.id]);
    // The whole list is Globex's: its three members and the new one.
    const all = await scim("/Users", { token });
    expect(all.body.totalResults).toBe(4);

    // Acme's SCIM token still works in DB, and sees none of Globex's members.
    const acmeToken = await issueScimToken(acme);
    expect(await keysOf(acme.institution.id, "scim_token")).toEqual([]);
    const acmes = await scim(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`, {
      token: acmeToken.token,
    });
    expect(acmes.body.totalResults).toBe(0);

    const revoked = await call(`/api/institutions/${globex.institution.id}/scim-tokens/${id}`, {
      method: "DELETE",
      token: globex.admin.token,
    });
    expect(revoked.status).toBe(204);
    expect(await keysOf(globex.institution.id, "scim_token")).toEqual([]);
    const after = await scim("/Users", { token });
    expect(after.res.status).toBe(401);
    const row = await inDb("DB_1")
      .select({ revokedAt: scimTokens.revokedAt })
      .from(scimTokens)
      .where(and(eq(scimTokens.id, id), eq(scimTokens.institutionId, globex.institution.id)))
      .get();
    expect(row?.revokedAt).not.toBeNull();
  });
});

describe("Stripe's webhook for an institution in DB_1", () => {
  it("finds the institution by its customer's directory key and applies the subscription in DB_1", async () => {
    const tenant = await createTenant({ database: "DB_1", plan: "free" });
    const started = await startCheckout(tenant);
    expect(started.res.status).toBe(201);
    const [account] = await inDb("DB_1")
      .select()
      .from(billingAccounts)
      .where(eq(billingAccounts.institutionId, tenant.institution.id))
      .all();
    expect(account?.stripeCustomerId).toMatch(/^cus_/);
    const customer = account?.stripeCustomerId as string;
    expect(await keysOf(tenant.institution.id, "stripe_customer")).toEqual([customer]);

    const paid = await completeCheckout(started.body.url);
    expect(paid.customer).toBe(customer);
    expect(paid.delivered.length).toBeGreaterThan(0);
    expect(paid.delivered.every((d) => d.status === 200)).toBe(true);

    const after = await inDb("DB_1")
      .select()
      .from(billingAccounts)
      .where(eq(billingAccounts.institutionId, tenant.institution.id))
      .get();
    expect(after?.subscriptionId).toBe(paid.subscription);
    const institution = await inDb("DB_1")
      .select({ plan: institutions.plan })
      .from(institutions)
      .where(eq(institutions.id, tenant.institution.id))
      .get();
    expect(institution?.plan).toBe("pro");
    // Each event is taken in hand where it is applied: DB_1; DB holds only the customer's key.
    const { data } = await stripeDeliveries(customer);
    const ids = data.map((d) => JSON.parse(d.payload).id as string);
    const handled = await inDb("DB_1").select({ id: stripeEvents.id }).from(stripeEvents).all();
    expect(ids.every((id) => handled.some((row) => row.id === id))).toBe(true);
    const inFirst = await inDb("DB").select({ id: stripeEvents.id }).from(stripeEvents).all();
    expect(inFirst.filter((row) => ids.includes(row.id))).toEqual([]);
    expect(
      await inDb("DB")
        .select()
        .from(billingAccounts)
        .where(eq(billingAccounts.stripeCustomerId, customer))
        .all(),
    ).toEqual([]);

    // A delivery repeated by Stripe is a duplicate there, as in DB.
    const again = await deliver(data[data.length - 1] as (typeof data)[number]);
    expect(again.status).toBe(200);
    expect((await again.json<{ outcome: string }>()).outcome).toBe("duplicate");
  });
});
