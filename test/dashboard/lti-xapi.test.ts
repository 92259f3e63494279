import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ltiLaunches } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { newId } from "../../src/platform/ids";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant, type Tenant } from "../helpers/tenants";
import { platformSimulator } from "../lti/support";
import { Browser, csrfOf, textOf } from "./support";

const LTI = "/dashboard/settings/integrations/lti";
const XAPI = "/dashboard/settings/integrations/xapi";

async function signedInAdmin(tenant?: Tenant) {
  const t = tenant ?? (await createTenant());
  const browser = new Browser();
  expect((await browser.signIn(t.admin.email)).status).toBe(303);
  return { tenant: t, browser };
}

async function consumersOf(tenant: Tenant) {
  const { body } = await callJson("/api/integrations/lti-consumers", { token: tenant.admin.token });
  return body.data as any[];
}

async function endpointsOf(tenant: Tenant) {
  const { body } = await callJson("/api/integrations/xapi-endpoints", { token: tenant.admin.token });
  return body.data as any[];
}

async function platformFields() {
  const platform = platformSimulator();
  const clientId = `client-${crypto.randomUUID()}`;
  const urls = await platform.configure({ client_id: clientId });
  return {
    name: "Canvas (test)",
    issuer: urls.issuer,
    client_id: clientId,
    deployment_ids: "dep-1\ndep-2",
    auth_login_url: urls.auth_login_url,
    auth_token_url: urls.auth_token_url,
    jwks_url: urls.jwks_url,
    auth_token_audience: "",
  };
}

/** An LRS on the loopback receiver: `about`, then `statements`, as the test call asks. */
function lrs() {
  const endpoint = receiverEndpoint();
  return {
    base: `${endpoint.url}/xapi/`,
    answer: () =>
      endpoint.configure({
        script: [
          { status: 200, body: '{"version":["1.0.3"]}', headers: { "Content-Type": "application/json" } },
          { status: 200, body: '{"statements":[]}', headers: { "Content-Type": "application/json" } },
        ],
      }),
  };
}

describe("dashboard: LTI", () => {
  it("adds a registration by hand, shows the values to paste into the LMS, edits and deletes it", async () => {
    const { tenant, browser } = await signedInAdmin();
    const list = textOf(await (await browser.get(LTI)).text());
    expect(list).toContain("No LMS registered yet");

    const fields = await platformFields();
    const csrf = await browser.csrfFor(`${LTI}/new`);
    const created = await browser.post(LTI, { _csrf: csrf, ...fields });
    expect(created.status, await created.clone().text()).toBe(303);
    const [consumer] = await consumersOf(tenant);
    expect(consumer).toMatchObject({
      name: "Canvas (test)",
      client_id: fields.client_id,
      deployment_ids: ["dep-1", "dep-2"],
    });
    expect(created.headers.get("Location")).toBe(`${LTI}/registrations/${consumer.id}?notice=created`);

    const detail = await browser.get(`${LTI}/registrations/${consumer.id}`);
    const html = await detail.text();
    expect(html).toContain(`value="${consumer.tool.login_url}"`);
    expect(html).toContain(`value="${consumer.tool.launch_url}"`);
    expect(html).toContain(`value="${consumer.tool.jwks_url}"`);
    expect(html).toContain('data-copy="login-url"');

    const saved = await browser.post(`${LTI}/registrations/${consumer.id}`, {
      _csrf: csrfOf(html),
      ...fields,
      name: "Canvas (renamed)",
    });
    expect(saved.status).toBe(303);
    expect((await consumersOf(tenant))[0].name).toBe("Canvas (renamed)");

    const bad = await browser.post(`${LTI}/registrations/${consumer.id}`, {
      _csrf: csrfOf(html),
      ...fields,
      deployment_ids: "",
    });
    expect(bad.status).toBe(422);
    expect(textOf(await bad.text())).toContain("Deployment ids:");
    expect((await consumersOf(tenant))[0].deployment_ids).toEqual(["dep-1", "dep-2"]);

    // A forged form changes nothing.
    expect(
      (await browser.post(`${LTI}/registrations/${consumer.id}/delete`, { _csrf: "forged" })).status,
    ).toBe(403);
    expect(await consumersOf(tenant)).toHaveLength(1);
    const deleted = await browser.post(`${LTI}/registrations/${consumer.id}/delete`, { _csrf: csrfOf(html) });
    expect(deleted.status).toBe(303);
    expect(await consumersOf(tenant)).toHaveLength(0);
  });

  it("refuses an invalid registration with the fields named, creating nothing", async () => {
    const { tenant, browser } = await signedInAdmin();
    const csrf = await browser.csrfFor(`${LTI}/new`);
    const res = await browser.post(LTI, {
      _csrf: csrf,
      ...(await platformFields()),
      issuer: "",
      auth_login_url: "http://10.0.0.1/authorize",
    });
    expect(res.status).toBe(422);
    const text = textOf(await res.text());
    expect(text).toContain("Issuer:");
    expect(await consumersOf(tenant)).toHaveLength(0);
  });

  it("creates a registration link for dynamic registration, shown once", async () => {
    const { browser } = await signedInAdmin();
    const csrf = await browser.csrfFor(LTI);
    const res = await browser.post(`${LTI}/registration-link`, { _csrf: csrf });
    expect(res.status).toBe(201);
    const html = await res.text();
    expect(html).toMatch(/id="registration-link"[^>]*value="https:\/\/[^"]+\/api\/lti\/register\?link=/);
  });

  it("shows the launch log with filters and each refusal's reason", async () => {
    const { tenant, browser } = await signedInAdmin();
    const db = database(env.DB);
    const at = (s: number) =>
      new Date(Date.UTC(2026, 10, 20, 9, 0, s)).toISOString().replace(/\.\d{3}Z$/, "Z");
    await db.insert(ltiLaunches).values([
      {
        id: newId("ltl"),
        institutionId: tenant.institution.id,
        status: "failed",
        failureReason: "deployment_unknown",
        failureDetail: "The deployment id dep-x is not registered.",
        createdAt: at(1),
      },
      {
        id: newId("ltl"),
        institutionId: tenant.institution.id,
        status: "succeeded",
        kind: "resource_link",
        userId: tenant.learner.id,
        createdAt: at(2),
      },
    ]);
    const all = textOf(await (await browser.get(`${LTI}/launches`)).text());
    expect(all).toContain("deployment_unknown");
    expect(all).toContain("The deployment id dep-x is not registered.");
    expect(all).toContain(tenant.learner.id);
    const failed = textOf(await (await browser.get(`${LTI}/launches?status=failed`)).text());
    expect(failed).toContain("deployment_unknown");
    expect(failed).not.toContain(tenant.learner.id);
    const none = textOf(await (await browser.get(`${LTI}/launches?kind=deep_linking`)).text());
    expect(none).toContain("No launch matches these filters");
    // Another institution's log shows none of these.
    const other = await signedInAdmin();
    expect(textOf(await (await other.browser.get(`${LTI}/launches`)).text())).toContain("No launches yet");
  });

  it("answers another institution's registration with 404", async () => {
    const { browser } = await signedInAdmin();
    const other = await createTenant();
    const fields = await platformFields();
    const { body } = await callJson("/api/integrations/lti-consumers", {
      token: other.admin.token,
      body: { ...fields, deployment_ids: ["d"], auth_token_audience: undefined },
    });
    expect((await browser.get(`${LTI}/registrations/${body.id}`)).status).toBe(404);
    const csrf = await browser.csrfFor(LTI);
    expect((await browser.post(`${LTI}/registrations/${body.id}/delete`, { _csrf: csrf })).status).toBe(404);
    expect(await consumersOf(other)).toHaveLength(1);
  });
});

describe("dashboard: xAPI", () => {
  it("adds an endpoint (the secret write-only), tests it, shows health and the forwarding log, edits and deletes it", async () => {
    const { tenant, browser } = await signedInAdmin();
    expect(textOf(await (await browser.get(XAPI)).text())).toContain("No LRS connected yet");
    const target = lrs();
    const csrf = await browser.csrfFor(`${XAPI}/new`);
    const fields = {
      name: "Our LRS",
      endpoint: target.base,
      version: "1.0.3",
      auth_type: "basic",
      username: "lingua",
      password: "pw-very-secret",
      activities: ["answered", "completed"],
      actor_format: "account",
      enabled: "true",
    };
    const created = await browser.post(XAPI, { _csrf: csrf, ...fields });
    expect(created.status, await created.clone().text()).toBe(303);
    const [endpoint] = await endpointsOf(tenant);
    expect(endpoint).toMatchObject({
      name: "Our LRS",
      activities: ["answered", "completed"],
      auth: { username: "lingua" },
    });

    const detail = await browser.get(`${XAPI}/${endpoint.id}`);
    const html = await detail.text();
    expect(html).not.toContain("pw-very-secret");
    const text = textOf(html);
    expect(text).toContain("Last 24 h: 0 sent, 0 failed");
    expect(text).toContain("No statements yet");

    await target.answer();
    const tested = await browser.post(`${XAPI}/${endpoint.id}/test`, { _csrf: csrfOf(html) });
    expect(tested.status).toBe(200);
    expect(textOf(await tested.text())).toContain("The LRS answered and accepted the credentials.");

    // Saved without a password: the stored one is kept (same identity).
    const saved = await browser.post(`${XAPI}/${endpoint.id}`, {
      _csrf: csrfOf(html),
      ...fields,
      name: "Renamed LRS",
      password: "",
    });
    expect(saved.status, await saved.clone().text()).toBe(303);
    expect((await endpointsOf(tenant))[0]).toMatchObject({ name: "Renamed LRS", auth: { secret_set: true } });

    // Another username without a password: the service's rule, shown on the form.
    const refused = await browser.post(`${XAPI}/${endpoint.id}`, {
      _csrf: csrfOf(html),
      ...fields,
      username: "someone-else",
      password: "",
    });
    expect(refused.status).toBe(422);
    expect(textOf(await refused.text())).toContain("Password:");
    expect((await endpointsOf(tenant))[0].auth.username).toBe("lingua");

    const filtered = textOf(
      await (await browser.get(`${XAPI}/${endpoint.id}?status=failed&verb=answered`)).text(),
    );
    expect(filtered).toContain("No statement matches these filters");

    expect((await browser.post(`${XAPI}/${endpoint.id}/delete`, { _csrf: "forged" })).status).toBe(403);
    expect(await endpointsOf(tenant)).toHaveLength(1);
    expect((await browser.post(`${XAPI}/${endpoint.id}/delete`, { _csrf: csrfOf(html) })).status).toBe(303);
    expect(await endpointsOf(tenant)).toHaveLength(0);
  });

  it("requests a back-fill and shows its progress; refuses a bad day with the field named", async () => {
    const { tenant, browser } = await signedInAdmin();
    const { body: endpoint } = await callJson("/api/integrations/xapi-endpoints", {
      token: tenant.admin.token,
      body: { name: "LRS", endpoint: lrs().base, auth: { type: "basic", username: "u", password: "p" } },
    });
    const path = `${XAPI}/${endpoint.id}`;
    const csrf = await browser.csrfFor(path);
    const bad = await browser.post(`${path}/backfills`, { _csrf: csrf, since: "2026-02-30" });
    expect(bad.status).toBe(422);
    expect(textOf(await bad.text())).toContain("Since:");
    const today = new Date().toISOString().slice(0, 10);
    const res = await browser.post(`${path}/backfills`, { _csrf: csrf, since: today });
    expect(res.status, await res.clone().text()).toBe(303);
    const { body: backfills } = await callJson(`/api/integrations/xapi-endpoints/${endpoint.id}/backfills`, {
      token: tenant.admin.token,
    });
    expect(backfills.data).toHaveLength(1);
    const page = await (await browser.get(`${path}?notice=backfill`)).text();
    expect(page).toMatch(/statements queued/);
    const status = await browser.get(`${path}/backfills/${backfills.data[0].id}/status`);
    expect(await status.json()).toMatchObject({ id: backfills.data[0].id, status: expect.any(String) });
  });

  it("refuses an invalid endpoint with the fields named, creating nothing", async () => {
    const { tenant, browser } = await signedInAdmin();
    const csrf = await browser.csrfFor(`${XAPI}/new`);
    const res = await browser.post(XAPI, {
      _csrf: csrf,
      name: "",
      endpoint: "not a url",
      version: "1.0.3",
      auth_type: "basic",
      username: "u",
      password: "",
      actor_format: "account",
      enabled: "true",
    });
    expect(res.status).toBe(422);
    const text = textOf(await res.text());
    expect(text).toContain("Name:");
    expect(text).toContain("Activities:");
    expect(await endpointsOf(tenant)).toHaveLength(0);
  });

  it("gives learners and instructors no LTI or xAPI page", async () => {
    const tenant = await createTenant();
    for (const role of ["learner", "instructor"] as const) {
      const browser = new Browser();
      browser.cookies.set("__Host-lingua_session", tenant[role].token);
      for (const path of [LTI, `${LTI}/new`, `${LTI}/launches`, XAPI, `${XAPI}/new`]) {
        expect([role, path, (await browser.get(path)).status]).toEqual([role, path, 403]);
      }
    }
  });
});
