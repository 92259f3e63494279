import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  billingAccounts,
  directoryKeys,
  institutions,
  ltiConsumers,
  ltiLaunches,
  ltiStates,
  scimTokens,
  ssoDomains,
  ssoRequests,
  ssoSignIns,
  stripeEvents,
  users,
} from "../../src/db/schema";
import { sha256Hex } from "../../src/platform/crypto/encoding";
import { database } from "../../src/platform/db";
import { startCheckout } from "../billing/support";
import { call, callJson } from "../helpers/api";
import { dohStub } from "../helpers/receiver-doh";
import { completeCheckout, deliver, stripeDeliveries } from "../helpers/stripe";
import { createTenant, freshIp, insertUser, PASSWORD, type Tenant } from "../helpers/tenants";
import {
  launch,
  launchClaims,
  launchThroughPlatform,
  login,
  postCallback,
  registerPlatform,
} from "../lti/support";
import { issueScimToken, scim, USER_SCHEMA, uniqueEmail } from "../scim/support";
import { codeOf, exchange, op, person, registerClient, signInThroughProvider } from "../sso/oidc-browser";
import { putSso, uniqueName, verifyDomainByDns } from "../sso/support";

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

describe("SSO by verified domain for an institution in DB_1", () => {
  const doh = dohStub();

  /** OIDC through the loopback OpenID Provider, `domain` claimed and proven by DNS by the institution's admin. */
  async function withSso(tenant: Tenant, domain: string, extra: Record<string, unknown> = {}) {
    const client = await registerClient(tenant.institution.id);
    const put = await putSso(tenant, {
      type: "oidc",
      state: "active",
      enforced: false,
      domains: [domain],
      oidc: { issuer: op, client_id: client.clientId, client_secret: client.clientSecret },
      ...extra,
    });
    expect(put.res.status, JSON.stringify(put.body)).toBe(200);
    await verifyByDns(tenant, domain, put.body);
    return { ...tenant, domain, issuer: op, clientId: client.clientId };
  }

  const verifyByDns = (tenant: Tenant, domain: string, sso?: any) =>
    verifyDomainByDns(tenant, domain, doh, sso);

  const domainRow = (name: "DB" | "DB_1", institutionId: string, domain: string) =>
    inDb(name)
      .select({ status: ssoDomains.status })
      .from(ssoDomains)
      .where(and(eq(ssoDomains.institutionId, institutionId), eq(ssoDomains.domain, domain)))
      .get();

  it("begins at the domain's key, and ends with a member provisioned in DB_1 and a session there", async () => {
    const tenant = await withSso(await createTenant({ database: "DB_1" }), `${uniqueName("d")}.school.test`);
    expect(await keysOf(tenant.institution.id, "sso_domain")).toEqual([tenant.domain]);
    const who = await person(tenant);
    const { res } = await signInThroughProvider(tenant, who);
    expect(res.status, await res.clone().text()).toBe(303);
    const code = codeOf(res);
    expect(code.startsWith(`${tenant.institution.id}.`)).toBe(true);
    const session = await exchange(code);
    expect(session.res.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body.user).toMatchObject({ email: who.email, institution_id: tenant.institution.id });
    const me = await callJson("/api/auth/me", { token: session.body.token });
    expect(me.body.institution.id).toBe(tenant.institution.id);

    // Everything of the sign-in is in DB_1; DB has the keys only.
    const member = await inDb("DB_1").select().from(users).where(eq(users.email, who.email)).get();
    expect(member?.institutionId).toBe(tenant.institution.id);
    expect(await inDb("DB").select().from(users).where(eq(users.email, who.email)).all()).toEqual([]);
    expect(await keysOf(tenant.institution.id, "email")).toContain(who.email);
    for (const [name, expected] of [
      ["DB_1", 1],
      ["DB", 0],
    ] as const) {
      const signIns = await inDb(name)
        .select()
        .from(ssoSignIns)
        .where(eq(ssoSignIns.institutionId, tenant.institution.id))
        .all();
      expect(signIns.filter((row) => row.email === who.email)).toHaveLength(expected);
      const requests = await inDb(name)
        .select()
        .from(ssoRequests)
        .where(eq(ssoRequests.institutionId, tenant.institution.id))
        .all();
      expect(requests.length > 0).toBe(expected === 1);
    }
    // The code is single use, in DB_1 as in DB.
    expect((await exchange(code)).res.status).toBe(401);
  });

  it("refuses a password at a domain it enforces SSO for, and lets its break-glass admin in", async () => {
    const tenant = await createTenant({ database: "DB_1" });
    const domain = `${uniqueName("d")}.school.test`;
    const atDomain = async (role: string, local: string) => {
      const user = await insertUser(role, tenant.institution.id, undefined, "DB_1");
      const email = `${local}.${crypto.randomUUID().slice(0, 8)}@${domain}`;
      // As insertUser places a member outside DB: the address in DB_1, its key in DB.
      await inDb("DB_1").update(users).set({ email }).where(eq(users.id, user.id));
      await inDb("DB")
        .insert(directoryKeys)
        .values({ kind: "email", key: email, institutionId: tenant.institution.id });
      return email;
    };
    const member = await atDomain("learner", "pw");
    const breakGlassEmail = await atDomain("institution_admin", "bg");
    const breakGlass = await inDb("DB_1").select().from(users).where(eq(users.email, breakGlassEmail)).get();
    await withSso(tenant, domain, { enforced: true, break_glass_admin_id: breakGlass?.id });
    const signIn = (email: string) =>
      callJson("/api/auth/sign-in", {
        body: { email, password: PASSWORD },
        headers: { "CF-Connecting-IP": freshIp() },
      });
    const refused = await signIn(member);
    expect(refused.res.status).toBe(403);
    expect(refused.body.code).toBe("sso_required");
    expect((await signIn(`${uniqueName("new")}@${domain}`)).body.code).toBe("sso_required");
    expect((await signIn(breakGlassEmail)).res.status).toBe(200);
  });

  it("hands a domain to the latest institution to prove it, across databases as within one", async () => {
    const domain = `${uniqueName("d")}.school.test`;
    const [inFirst, inSecond] = await Promise.all([createTenant(), createTenant({ database: "DB_1" })]);
    const beginsAt = async () => {
      const begin = await callJson(`/api/auth/sso?email=${encodeURIComponent(`x@${domain}`)}`, {
        headers: { Accept: "application/json" },
      });
      expect(begin.res.status, JSON.stringify(begin.body)).toBe(200);
      const redirect = new URL(begin.body.redirect_url).searchParams.get("redirect_uri") ?? "";
      return redirect.split("/oidc/")[1]?.split("/")[0];
    };
    await withSso(inSecond, domain);
    expect(await beginsAt()).toBe(inSecond.institution.id);

    // Proven by the institution in DB: DB_1's holder goes back to pending, and the key goes.
    await withSso(inFirst, domain);
    expect(await beginsAt()).toBe(inFirst.institution.id);
    expect((await domainRow("DB_1", inSecond.institution.id, domain))?.status).toBe("pending");
    expect((await domainRow("DB", inFirst.institution.id, domain))?.status).toBe("verified");
    expect(await keysOf(inSecond.institution.id, "sso_domain")).toEqual([]);

    // Proven again in DB_1: DB's holder goes back to pending, and the key names DB_1's institution.
    await verifyByDns(inSecond, domain);
    expect(await beginsAt()).toBe(inSecond.institution.id);
    expect((await domainRow("DB", inFirst.institution.id, domain))?.status).toBe("pending");
    expect(await keysOf(inSecond.institution.id, "sso_domain")).toEqual([domain]);
  });
});

describe("LTI for an institution in DB_1", () => {
  it("launches through the shared and the registration's own URLs, provisioning and updating the member in DB_1", async () => {
    const tenant = await createTenant({ database: "DB_1" });
    const reg = await registerPlatform(tenant.admin);
    const id = reg.consumer.id as string;
    expect(await inDb("DB_1").select().from(ltiConsumers).where(eq(ltiConsumers.id, id)).get()).toBeDefined();
    expect(await inDb("DB").select().from(ltiConsumers).where(eq(ltiConsumers.id, id)).all()).toEqual([]);
    expect((await keysOf(tenant.institution.id, "lti_registration")).includes(id)).toBe(true);
    expect(await keysOf(tenant.institution.id, "lti_client")).toEqual([`${reg.urls.issuer} ${reg.clientId}`]);

    // The shared login URL (issuer and client id), then the shared callback (the state names the registration).
    const sub = `user-${crypto.randomUUID()}`;
    const email = `ada.${crypto.randomUUID()}@lms.example`;
    const first = await launch(reg, { sub, email });
    expect(first.res.status, JSON.stringify(first.body)).toBe(200);
    expect(first.state.startsWith(`${id}.`)).toBe(true);
    const member = await inDb("DB_1").select().from(users).where(eq(users.id, first.body.user.id)).get();
    expect(member).toMatchObject({ email, institutionId: tenant.institution.id });
    expect(await inDb("DB").select().from(users).where(eq(users.email, email)).all()).toEqual([]);
    expect(await keysOf(tenant.institution.id, "email")).toContain(email);
    const me = await callJson("/api/auth/me", { token: first.body.session.token });
    expect(me.body.institution.id).toBe(tenant.institution.id);
    for (const [name, expected] of [
      ["DB_1", true],
      ["DB", false],
    ] as const) {
      const launches = await inDb(name)
        .select()
        .from(ltiLaunches)
        .where(eq(ltiLaunches.consumerId, id))
        .all();
      expect(launches.length > 0).toBe(expected);
      const states = await inDb(name).select().from(ltiStates).where(eq(ltiStates.consumerId, id)).all();
      expect(states.length > 0).toBe(expected);
    }

    // A returning person with a new address: claimed across databases; one Acme's member holds is not taken.
    const renamed = `ada.${crypto.randomUUID()}@lms.example`;
    const second = await launch(reg, { sub, email: renamed });
    expect(second.res.status).toBe(200);
    expect(second.body.user.id).toBe(first.body.user.id);
    expect(
      (await inDb("DB_1").select().from(users).where(eq(users.id, first.body.user.id)).get())?.email,
    ).toBe(renamed);
    expect(await keysOf(tenant.institution.id, "email")).toContain(renamed);
    const third = await launch(reg, { sub, email: acme.learner.email });
    expect(third.res.status).toBe(200);
    expect(
      (await inDb("DB_1").select().from(users).where(eq(users.id, first.body.user.id)).get())?.email,
    ).toBe(renamed);
    expect(
      await inDb("DB").select().from(directoryKeys).where(eq(directoryKeys.key, acme.learner.email)).all(),
    ).toEqual([]);

    // The registration's own login URL and callback, through the platform (which checks the redirect URI).
    const own = await launchThroughPlatform(reg);
    expect(own.res?.status, JSON.stringify(own.body)).toBe(200);

    // A browser's code, exchanged for the session where the institution lives.
    const { state, nonce, cookie } = await login(reg);
    const idToken = await reg.platform.idToken(launchClaims(reg, nonce));
    const res = await postCallback(
      { id_token: idToken, state },
      { json: false, cookie: (cookie as string).split(";")[0] as string },
    );
    expect(res.status).toBe(303);
    const code = new URLSearchParams(new URL(res.headers.get("Location") as string).hash.slice(1)).get(
      "code",
    );
    expect(code?.startsWith(`${tenant.institution.id}.`)).toBe(true);
    const exchanged = await callJson("/api/lti/session", { body: { code } });
    expect(exchanged.res.status, JSON.stringify(exchanged.body)).toBe(200);
    expect((await callJson("/api/lti/session", { body: { code } })).res.status).toBe(401);

    // Its key set, by the id in the path.
    const jwks = await callJson(`/api/lti/jwks/${id}`);
    expect(jwks.res.status).toBe(200);
    expect(jwks.body.keys.length).toBeGreaterThan(0);

    // Deleted: its keys go, and its URLs find nothing.
    const deleted = await call(`/api/integrations/lti-consumers/${id}`, {
      method: "DELETE",
      token: tenant.admin.token,
    });
    expect(deleted.status).toBe(204);
    expect(await keysOf(tenant.institution.id, "lti_registration")).toEqual([]);
    expect(await keysOf(tenant.institution.id, "lti_client")).toEqual([]);
    expect((await call(`/api/lti/jwks/${id}`)).status).toBe(404);
  });
});
