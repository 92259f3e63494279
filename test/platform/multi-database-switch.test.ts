import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { institutions, users } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { FREEZE, THAW } from "../../src/platform/move/sql";
import { forgetPlacement } from "../../src/platform/service/directory";
import { startCheckout } from "../billing/support";
import { call } from "../helpers/api";
import { dohStub } from "../helpers/receiver-doh";
import { completeCheckout, deliver, stripeDeliveries } from "../helpers/stripe";
import { createTenant, freshIp, PASSWORD, type Tenant } from "../helpers/tenants";
import { launchClaims, login, postCallback, registerPlatform } from "../lti/support";
import { issueScimToken, scim, USER_SCHEMA, uniqueEmail } from "../scim/support";
import { op, person, registerClient, signInThroughProvider } from "../sso/oidc-browser";
import { putSso, uniqueName, verifyDomainByDns } from "../sso/support";

/**
 * The entry points without an API token during a move's switch
 * (docs/design/multi-database.md#writes-during-the-switch): each write of an institution whose
 * directory row is `moving` is refused as a token's is (`503 institution_moving`, `Retry-After`),
 * writes nothing, and succeeds when repeated after the switch. The switch is held as the move holds
 * it: the directory row `moving`, and this isolate's cached placement dropped (as the move's
 * `PLACEMENT_TTL_MS` wait makes every isolate's lapse).
 */
const inDb = (name: "DB" | "DB_1") => database(env[name]);

async function freeze(tenant: Tenant) {
  await env.DB.prepare(FREEZE).bind(tenant.institution.id, "DB_1", new Date().toISOString()).run();
  forgetPlacement(tenant.institution.id);
}

async function thaw(tenant: Tenant) {
  await env.DB.prepare(THAW).bind(tenant.institution.id, new Date().toISOString()).run();
  forgetPlacement(tenant.institution.id);
}

async function expectMoving(res: Response) {
  expect(res.status, await res.clone().text()).toBe(503);
  expect(res.headers.get("Retry-After")).toBe("1");
  // A problem (`institution_moving`), or for a browser the page saying so.
  expect(await res.text()).toMatch(/institution_moving|being moved to another database/);
}

describe("entry points without a token while an institution in DB_1 switches", () => {
  const doh = dohStub();
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant({ database: "DB_1" });
  }, 60_000);

  it("SCIM: a write is refused and writes nothing, a read is served, the write succeeds after", async () => {
    const { token } = await issueScimToken(tenant);
    const email = uniqueEmail("switch");
    const body = { schemas: [USER_SCHEMA], userName: email, name: { givenName: "Ada", familyName: "King" } };
    await freeze(tenant);
    try {
      const refused = await scim("/Users", { token, body });
      expect(refused.res.status).toBe(503);
      expect(refused.res.headers.get("Retry-After")).toBe("1");
      expect(await inDb("DB_1").select().from(users).where(eq(users.email, email)).all()).toEqual([]);
      expect((await scim("/Users", { token })).res.status).toBe(200);
    } finally {
      await thaw(tenant);
    }
    expect((await scim("/Users", { token, body })).res.status).toBe(201);
  });

  it("password sign-in: refused during the switch, signed in after", async () => {
    const signIn = () =>
      call("/api/auth/sign-in", {
        method: "POST",
        body: { email: tenant.learner.email, password: PASSWORD },
        headers: { "CF-Connecting-IP": freshIp() },
      });
    await freeze(tenant);
    try {
      await expectMoving(await signIn());
    } finally {
      await thaw(tenant);
    }
    expect((await signIn()).status).toBe(200);
  });

  it("SSO: the callback is refused during the switch without spending its request, and completes after", async () => {
    const domain = `${uniqueName("d")}.school.test`;
    const client = await registerClient(tenant.institution.id);
    const put = await putSso(tenant, {
      type: "oidc",
      state: "active",
      enforced: false,
      domains: [domain],
      oidc: { issuer: op, client_id: client.clientId, client_secret: client.clientSecret },
    });
    expect(put.res.status, JSON.stringify(put.body)).toBe(200);
    await verifyDomainByDns(tenant, domain, doh, put.body);

    const ssoTenant = { ...tenant, domain, issuer: op, clientId: client.clientId };
    const who = await person(ssoTenant);
    let begun: Awaited<ReturnType<typeof signInThroughProvider>>;
    try {
      begun = await signInThroughProvider(ssoTenant, who, { beforeCallback: () => freeze(tenant) });
      await expectMoving(begun.res);
      expect(await inDb("DB_1").select().from(users).where(eq(users.email, who.email)).all()).toEqual([]);
    } finally {
      await thaw(tenant);
    }
    const { callbackUrl, stateCookie } = begun;
    const again = await call(`${callbackUrl.pathname}${callbackUrl.search}`, {
      headers: { "CF-Connecting-IP": freshIp(), Cookie: stateCookie },
    });
    expect(again.status, await again.clone().text()).toBe(303);
    expect(await inDb("DB_1").select().from(users).where(eq(users.email, who.email)).get()).toBeDefined();
  });

  it("LTI: a login and a launch's callback are refused during the switch, the same launch succeeds after", async () => {
    const reg = await registerPlatform(tenant.admin);
    const { state, nonce } = await login(reg);
    const idToken = await reg.platform.idToken(launchClaims(reg, nonce));
    await freeze(tenant);
    try {
      await expectMoving((await login(reg)).res);
      await expectMoving(await postCallback({ id_token: idToken, state }));
    } finally {
      await thaw(tenant);
    }
    // The state was not spent: the platform's browser posting again launches.
    const launched = await postCallback({ id_token: idToken, state });
    expect(launched.status, await launched.clone().text()).toBe(200);
  });

  it("Stripe's webhook: an event is refused during the switch, and applied when Stripe delivers it again", async () => {
    const free = await createTenant({ database: "DB_1", plan: "free" });
    const started = await startCheckout(free);
    expect(started.res.status).toBe(201);
    await freeze(free);
    let customer: string;
    try {
      const paid = await completeCheckout(started.body.url);
      customer = paid.customer;
      expect(paid.delivered.length).toBeGreaterThan(0);
      expect(paid.delivered.every((d) => d.status === 503)).toBe(true);
    } finally {
      await thaw(free);
    }
    const planOf = async () =>
      (
        await inDb("DB_1")
          .select({ plan: institutions.plan })
          .from(institutions)
          .where(eq(institutions.id, free.institution.id))
          .get()
      )?.plan;
    expect(await planOf()).toBe("free");
    // Stripe's retries, in order.
    for (const delivery of (await stripeDeliveries(customer)).data) {
      const res = await deliver(delivery);
      expect(res.status, await res.clone().text()).toBe(200);
    }
    expect(await planOf()).toBe("pro");
  });
});
