import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  directoryKeys,
  ltiConsumers,
  ltiLaunches,
  ltiRegistrationLinks,
  ssoRequests,
  users,
} from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { createTenant, freshIp, type Tenant } from "../helpers/tenants";
import {
  authorize,
  deepLinkingClaims,
  deepLinkingState,
  login,
  newLink,
  open,
  platformSimulator,
  postCallback,
  registerPlatform,
  registrationOf,
} from "../lti/support";
import { issueScimToken, scim, USER_SCHEMA, uniqueEmail } from "../scim/support";
import { op, registerClient } from "../sso/oidc-browser";
import { putSso, uniqueName } from "../sso/support";

/**
 * The entry points routed last (docs/design/multi-database.md#entry-points-found-by-a-key): LTI
 * dynamic registration, the deep-linking selection page and SSO by institution slug, each for an
 * institution in DB_1, over HTTP, with its rows in DB_1 only.
 */
let globex: Tenant;

beforeAll(async () => {
  globex = await createTenant({ database: "DB_1" });
});

const inDb = (name: "DB" | "DB_1") => database(env[name]);

describe("LTI dynamic registration for an institution in DB_1", () => {
  it("finds the link where the institution lives, and stores the registration and its keys there", async () => {
    const link = await newLink(globex.admin);
    const secret = new URL(link.url).searchParams.get("link") ?? "";
    expect(secret.startsWith(`${globex.institution.id}.`)).toBe(true);
    const linkIn = (name: "DB" | "DB_1") =>
      inDb(name)
        .select()
        .from(ltiRegistrationLinks)
        .where(eq(ltiRegistrationLinks.institutionId, globex.institution.id))
        .all();
    expect(await linkIn("DB_1")).toHaveLength(1);
    expect(await linkIn("DB")).toEqual([]);

    const platform = platformSimulator();
    const { openid_configuration } = await registrationOf(platform).script({ token: "registration-token" });
    const { res, text } = await open(link.url, {
      openid_configuration,
      registration_token: "registration-token",
    });
    expect(res.status, text).toBe(200);
    const [registered] = await inDb("DB_1")
      .select()
      .from(ltiConsumers)
      .where(eq(ltiConsumers.institutionId, globex.institution.id))
      .all();
    expect(registered?.clientId).toBeTruthy();
    expect((await linkIn("DB_1"))[0]?.consumerId).toBe(registered?.id);
    expect(
      await inDb("DB")
        .select()
        .from(ltiConsumers)
        .where(eq(ltiConsumers.id, String(registered?.id)))
        .all(),
    ).toEqual([]);
    // Its keys are claimed in DB, as for a registration made through the API.
    const keys = await inDb("DB")
      .select({ kind: directoryKeys.kind })
      .from(directoryKeys)
      .where(
        and(
          eq(directoryKeys.institutionId, globex.institution.id),
          eq(directoryKeys.key, String(registered?.id)),
        ),
      )
      .all();
    expect(keys).toEqual([{ kind: "lti_registration" }]);

    // Used once, wherever it lives.
    const again = await open(link.url, { openid_configuration });
    expect(again.res.status).toBe(410);
  });
});

describe("the deep-linking selection page for an institution in DB_1", () => {
  it("is sent to the page with its institution named, and the page reads the launch in DB_1", async () => {
    const tenant = await createTenant({ database: "DB_1" });
    const reg = await registerPlatform(tenant.admin);
    await reg.platform.learnToolKeys();
    const { return_url } = await deepLinkingState(reg.platform);
    const started = await login(reg, {}, freshIp(), reg.consumer.tool.login_url);
    expect(started.res.status).toBe(302);
    const claims = deepLinkingClaims(reg, "", return_url);
    const authorized = await authorize(reg.platform, started.redirect!, claims);
    expect(authorized.status).toBe(200);
    const res = await postCallback(authorized.body.fields!, { url: authorized.body.action!, json: false });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("Location") ?? "");
    const launchId = location.pathname.split("/")[4] ?? "";
    expect(location.searchParams.get("institution")).toBe(tenant.institution.id);
    expect(
      await inDb("DB_1").select().from(ltiLaunches).where(eq(ltiLaunches.id, launchId)).get(),
    ).toBeDefined();

    const page = await call(`${location.pathname}${location.search}`, { headers: { Accept: "text/html" } });
    expect(page.status).toBe(200);
    // Without its institution, the page looks in DB only (a redirect made before it named one).
    const bare = await call(location.pathname, { headers: { Accept: "text/html" } });
    expect(bare.status).toBe(404);
  });
});

describe("SSO by institution slug for an institution in DB_1", () => {
  it("begins at the slug's directory key and writes the pending request in DB_1", async () => {
    const tenant = await createTenant({ database: "DB_1" });
    // As POST /api/institutions places one outside DB: its slug's key in DB.
    await inDb("DB")
      .insert(directoryKeys)
      .values({ kind: "slug", key: tenant.institution.slug, institutionId: tenant.institution.id });
    const client = await registerClient(tenant.institution.id);
    const put = await putSso(tenant, {
      type: "oidc",
      state: "active",
      enforced: false,
      domains: [`${uniqueName("d")}.school.test`],
      oidc: { issuer: op, client_id: client.clientId, client_secret: client.clientSecret },
    });
    expect(put.res.status, JSON.stringify(put.body)).toBe(200);

    const begin = await callJson(`/api/auth/sso?institution=${tenant.institution.slug}`, {
      headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
    });
    expect(begin.res.status, JSON.stringify(begin.body)).toBe(200);
    const redirect = new URL(begin.body.redirect_url).searchParams.get("redirect_uri") ?? "";
    expect(redirect).toContain(`/oidc/${tenant.institution.id}/callback`);
    const requests = (name: "DB" | "DB_1") =>
      inDb(name).select().from(ssoRequests).where(eq(ssoRequests.institutionId, tenant.institution.id)).all();
    expect(await requests("DB_1")).toHaveLength(1);
    expect(await requests("DB")).toEqual([]);

    // An unknown slug is the same 404 as before.
    const unknown = await callJson("/api/auth/sso?institution=no-such-school", {
      headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
    });
    expect(unknown.res.status).toBe(404);
  });
});

describe("SCIM taking back a person it removed, for an institution in DB_1", () => {
  it("finds the former member where the institution lives, and takes them back there as the same user", async () => {
    const tenant = await createTenant({ database: "DB_1" });
    const { token } = await issueScimToken(tenant);
    const email = uniqueEmail("back-db1");
    const body = { schemas: [USER_SCHEMA], userName: email, name: { givenName: "Ana", familyName: "Back" } };
    const created = await scim("/Users", { token, body });
    expect(created.res.status, JSON.stringify(created.body)).toBe(201);
    expect((await scim(`/Users/${created.body.id}`, { token, method: "DELETE" })).res.status).toBe(204);
    // Removed: a user of no institution, kept in DB_1 with their history.
    const removed = await inDb("DB_1").select().from(users).where(eq(users.id, created.body.id)).get();
    expect(removed?.institutionId).toBeNull();

    const back = await scim("/Users", { token, body });
    expect(back.res.status, JSON.stringify(back.body)).toBe(201);
    expect(back.body.id).toBe(created.body.id);
    const member = await inDb("DB_1").select().from(users).where(eq(users.id, created.body.id)).get();
    expect(member?.institutionId).toBe(tenant.institution.id);
    expect(await inDb("DB").select().from(users).where(eq(users.email, email)).all()).toEqual([]);
  });
});
