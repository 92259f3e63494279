// SAML over HTTP: our SP metadata, the IdP-initiated setting, the replay cache, and sign-in through
// the ACS with Responses signed by the test IdP (test/helpers/saml-idp.ts).
import { DOMParser } from "@xmldom/xmldom";
import { beforeAll, describe, expect, it } from "vitest";
import { acceptAssertionOnce } from "../../src/domains/sso/saml/replay";
import { call, callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import {
  commentInNameId,
  createSamlIdp,
  postBinding,
  type ResponseOptions,
  readAuthnRequest,
  type SamlIdp,
  samlId,
  signedResponse,
  wrap,
} from "../helpers/saml-idp";
import { createTenant, freshIp, type Tenant } from "../helpers/tenants";
import { platformStaff, stateCookieOf, uniqueName } from "./support";

const MD = "urn:oasis:names:tc:SAML:2.0:metadata";

let idp: SamlIdp;
beforeAll(async () => {
  idp = await createSamlIdp();
});

let sequence = 0;
function domain(): string {
  sequence += 1;
  return `s${Date.now().toString(36)}${sequence}.acme.test`;
}

async function putSaml(tenant: Tenant, saml: Record<string, unknown> = {}, state = "draft") {
  return callJson(`/api/institutions/${tenant.institution.id}/sso`, {
    method: "PUT",
    token: tenant.admin.token,
    body: {
      type: "saml",
      state,
      domains: [domain()],
      saml: {
        idp_entity_id: idp.entityId,
        sso_url: "https://idp.acme.test/sso",
        certificates: [idp.certificatePem],
        ...saml,
      },
    },
  });
}

describe("SAML SP metadata", () => {
  it("answers our entity id, ACS and NameID formats, as the SSO settings announce them", async () => {
    const tenant = await createTenant();
    const { body: settings } = await putSaml(tenant);
    const sp = settings.saml.sp;
    const res = await call(sp.metadata_url);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/samlmetadata+xml; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=3600");
    const doc = new DOMParser().parseFromString(await res.text(), "text/xml");
    const entity = doc.documentElement;
    expect(entity?.localName).toBe("EntityDescriptor");
    expect(entity?.getAttribute("entityID")).toBe(sp.entity_id);
    const descriptor = doc.getElementsByTagNameNS(MD, "SPSSODescriptor")[0];
    expect(descriptor?.getAttribute("AuthnRequestsSigned")).toBe("false");
    expect(descriptor?.getAttribute("WantAssertionsSigned")).toBe("true");
    const acs = doc.getElementsByTagNameNS(MD, "AssertionConsumerService")[0];
    expect(acs?.getAttribute("Binding")).toBe("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST");
    expect(acs?.getAttribute("Location")).toBe(sp.acs_url);
    const formats = [...Array.from({ length: doc.getElementsByTagNameNS(MD, "NameIDFormat").length })].map(
      (_, i) => doc.getElementsByTagNameNS(MD, "NameIDFormat")[i]?.textContent,
    );
    expect(formats).toEqual([
      "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
      "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
    ]);
  });

  it("is 404 for an unknown institution and for one whose SSO is not SAML, alike", async () => {
    const unknown = await callJson("/api/institutions/ins_nobody/sso/saml/metadata");
    expect(unknown.res.status).toBe(404);
    expect(unknown.res.headers.get("Content-Type")).toContain("application/problem+json");
    const tenant = await createTenant();
    const none = await callJson(`/api/institutions/${tenant.institution.id}/sso/saml/metadata`);
    expect(none.res.status).toBe(404);
    expect(none.body.detail).toBe(unknown.body.detail);
  });
});

describe("SAML settings: IdP-initiated sign-in", () => {
  it("is off unless the institution turns it on", async () => {
    const tenant = await createTenant();
    const off = await putSaml(tenant);
    expect(off.res.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.saml.idp_initiated).toBe(false);
    const on = await putSaml(tenant, { idp_initiated: true });
    expect(on.body.saml.idp_initiated).toBe(true);
    const read = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
      token: tenant.admin.token,
    });
    expect(read.body.saml.idp_initiated).toBe(true);
    const wrong = await putSaml(tenant, { idp_initiated: "yes" });
    expect(wrong.res.status).toBe(422);
  });
});

describe("SAML replay cache", () => {
  it("accepts an assertion ID once per institution, concurrent posts included", async () => {
    const ctx = testContext();
    const assertionId = samlId();
    const input = { institutionId: "ins_replay_a", assertionId, acceptableUntilMs: ctx.now() + 300_000 };
    const results = await Promise.all([acceptAssertionOnce(ctx, input), acceptAssertionOnce(ctx, input)]);
    expect(results.sort()).toEqual([false, true]);
    expect(await acceptAssertionOnce(ctx, input)).toBe(false);
    // Another institution's assertion with the same ID is its own.
    expect(await acceptAssertionOnce(ctx, { ...input, institutionId: "ins_replay_b" })).toBe(true);
  });

  it("forgets an ID once its assertion has expired", async () => {
    const start = Date.now();
    const input = { institutionId: "ins_replay_c", assertionId: samlId(), acceptableUntilMs: start + 60_000 };
    expect(await acceptAssertionOnce(testContext({ now: () => start }), input)).toBe(true);
    const later = testContext({ now: () => start + 120_000 });
    expect(await acceptAssertionOnce(later, input)).toBe(true);
  });
});

// ---- Sign-in through the ACS ---------------------------------------------------------------------

interface SamlTenant extends Tenant {
  domain: string;
  acsUrl: string;
  entityId: string;
}

const SSO_URL = "https://idp.acme.test/app/lingua/sso/saml";

/** A tenant whose SAML SSO is active with the test IdP, its domain verified by platform staff. */
async function samlTenant(saml: Record<string, unknown> = {}): Promise<SamlTenant> {
  const tenant = await createTenant();
  const ssoDomain = `${uniqueName("d")}.school.test`;
  const put = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
    method: "PUT",
    token: tenant.admin.token,
    body: {
      type: "saml",
      state: "active",
      domains: [ssoDomain],
      saml: {
        idp_entity_id: idp.entityId,
        sso_url: SSO_URL,
        certificates: [idp.certificatePem],
        attribute_mapping: { email: "email", name: "displayName", role: "role", groups: "groups" },
        ...saml,
      },
    },
  });
  if (put.res.status !== 200) throw new Error(`PUT sso: ${put.res.status} ${JSON.stringify(put.body)}`);
  const verified = await callJson(
    `/api/institutions/${tenant.institution.id}/sso/domains/${ssoDomain}/verify`,
    { method: "POST", token: (await platformStaff()).token, body: { method: "manual" } },
  );
  if (verified.res.status !== 200) throw new Error(`verify: ${JSON.stringify(verified.body)}`);
  return {
    ...tenant,
    domain: ssoDomain,
    acsUrl: put.body.saml.sp.acs_url,
    entityId: put.body.saml.sp.entity_id,
  };
}

function person(tenant: SamlTenant) {
  const local = uniqueName("p");
  return { email: `${local}@${tenant.domain}`, name: `Person ${local}` };
}

function assertionFor(
  tenant: SamlTenant,
  who: { email: string; name: string },
  options: Partial<ResponseOptions> = {},
): Promise<string> {
  return signedResponse(idp, {
    acsUrl: tenant.acsUrl,
    audience: tenant.entityId,
    nameId: who.email,
    attributes: { email: who.email, displayName: who.name, groups: ["Year 9", "Maths"] },
    ...options,
  });
}

/** The IdP's page posting the Response to our ACS, as a browser would (with its cookies). */
function postToAcs(tenant: SamlTenant, xml: string, relayState?: string, cookie?: string) {
  const form = new URLSearchParams({ SAMLResponse: postBinding(xml) });
  if (relayState !== undefined) form.set("RelayState", relayState);
  return call(tenant.acsUrl, {
    method: "POST",
    rawBody: form.toString(),
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "CF-Connecting-IP": freshIp(),
      ...(cookie ? { Cookie: cookie } : {}),
    },
  });
}

async function problem(res: Response) {
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  return (await res.json()) as {
    status: number;
    code: string;
    reason: string;
    sign_in_id: string;
    detail: string;
  };
}

/** SP-initiated: GET /api/auth/sso, the AuthnRequest the IdP reads, and the browser's cookie. */
async function begin(email: string) {
  const res = await call(`/api/auth/sso?email=${encodeURIComponent(email)}`, {
    headers: { "CF-Connecting-IP": freshIp() },
  });
  expect(res.status).toBe(302);
  const location = res.headers.get("Location") ?? "";
  return { location, request: await readAuthnRequest(location), cookie: stateCookieOf(res) };
}

async function exchange(location: string | null) {
  const code = new URL(location ?? "").hash.replace(/^#code=/, "");
  return callJson("/api/auth/sso/session", {
    body: { code: decodeURIComponent(code) },
    headers: { "CF-Connecting-IP": freshIp() },
  });
}

function log(tenant: SamlTenant) {
  return callJson(`/api/institutions/${tenant.institution.id}/sso/log`, { token: tenant.admin.token });
}

describe("SAML sign-in, SP-initiated", () => {
  it("sends the browser to the IdP with an AuthnRequest and ends with a working session", async () => {
    const tenant = await samlTenant();
    const who = person(tenant);
    const { location, request, cookie } = await begin(who.email);
    expect(`${new URL(location).origin}${new URL(location).pathname}`).toBe(SSO_URL);
    expect(request).toMatchObject({
      destination: SSO_URL,
      acsUrl: tenant.acsUrl,
      issuer: tenant.entityId,
      protocolBinding: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST",
      signed: false,
    });
    expect(request.relayState).toBe(cookie.slice("sso_state_".length, cookie.indexOf("=")));

    const xml = await assertionFor(tenant, who, { inResponseTo: request.id });
    const res = await postToAcs(tenant, xml, request.relayState ?? "", cookie);
    expect(res.status, await res.clone().text()).toBe(303);
    const landing = new URL(res.headers.get("Location") ?? "");
    expect(`${landing.origin}${landing.pathname}`).toBe("https://api.lingua.test/dashboard/sso");
    expect(landing.hash).toMatch(/^#code=/);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("Set-Cookie")).toMatch(/^sso_state_[^=]+=; Path=\/api\/auth\/sso; Max-Age=0/);

    const session = await exchange(res.headers.get("Location"));
    expect(session.res.status).toBe(200);
    expect(session.body.user).toMatchObject({
      email: who.email,
      name: who.name,
      role: "learner",
      institution_id: tenant.institution.id,
    });
    const me = await callJson("/api/auth/me", { token: session.body.token });
    expect(me.res.status).toBe(200);
    expect(me.body.user.email).toBe(who.email);

    const entries = await log(tenant);
    expect(entries.body.data[0]).toMatchObject({
      protocol: "saml",
      reason: null,
      email: who.email,
      subject: who.email,
      provisioned: true,
    });
  });

  it("refuses a Response to another request, a replayed state, and a browser without the cookie", async () => {
    const tenant = await samlTenant();
    const who = person(tenant);

    const foreign = await begin(who.email);
    const other = await postToAcs(
      tenant,
      await assertionFor(tenant, who, { inResponseTo: samlId() }),
      foreign.request.relayState ?? "",
      foreign.cookie,
    );
    expect(other.status).toBe(400);
    expect(await problem(other)).toMatchObject({ code: "sso_sign_in_refused", reason: "saml_wrong_request" });

    const started = await begin(who.email);
    const xml = await assertionFor(tenant, who, { inResponseTo: started.request.id });
    const noCookie = await postToAcs(tenant, xml, started.request.relayState ?? "");
    expect((await problem(noCookie)).reason).toBe("browser_binding_missing");
    // The state was spent by that attempt: the same post again, with the cookie, is a used state.
    const again = await postToAcs(tenant, xml, started.request.relayState ?? "", started.cookie);
    expect((await problem(again)).reason).toBe("state_used");

    const fresh = await begin(who.email);
    const noRelay = await postToAcs(
      tenant,
      await assertionFor(tenant, who, { inResponseTo: fresh.request.id }),
    );
    expect((await problem(noRelay)).reason).toBe("state_missing");
  });
});

describe("SAML sign-in, IdP-initiated", () => {
  it("is refused and logged while off; once on, signs in, and the same assertion only once", async () => {
    const off = await samlTenant();
    const who = person(off);
    const refused = await postToAcs(off, await assertionFor(off, who), "https://app.example/deep-link");
    expect(refused.status).toBe(400);
    const body = await problem(refused);
    expect(body).toMatchObject({ code: "sso_sign_in_refused", reason: "saml_unsolicited" });
    const entries = await log(off);
    expect(entries.body.data[0]).toMatchObject({
      id: body.sign_in_id,
      protocol: "saml",
      reason: "saml_unsolicited",
    });

    const on = await samlTenant({ idp_initiated: true });
    const member = person(on);
    const xml = await assertionFor(on, member);
    const first = await postToAcs(on, xml);
    expect(first.status, await first.clone().text()).toBe(303);
    const session = await exchange(first.headers.get("Location"));
    expect(session.body.user).toMatchObject({ email: member.email, institution_id: on.institution.id });

    const replay = await postToAcs(on, xml);
    expect(replay.status).toBe(400);
    expect((await problem(replay)).reason).toBe("saml_replayed");
  });

  it("refuses the attacks with their reasons, each in the SSO log", async () => {
    const tenant = await samlTenant({ idp_initiated: true });
    const who = person(tenant);
    const mallory = `mallory@${tenant.domain}`;
    const cases: [string, Promise<string>][] = [
      ["saml_wrapped", assertionFor(tenant, who).then((xml) => wrap(xml, 3, mallory))],
      [
        "saml_comment_in_value",
        assertionFor(tenant, { ...who, email: `${who.email}.evil.test` }).then((xml) =>
          commentInNameId(xml, who.email.length),
        ),
      ],
      ["saml_algorithm_refused", assertionFor(tenant, who, { hash: "SHA-1" })],
      ["saml_wrong_audience", assertionFor(tenant, who, { audience: "https://other.example/sp" })],
      ["saml_wrong_destination", assertionFor(tenant, who, { recipient: "https://other.example/acs" })],
      ["saml_expired", assertionFor(tenant, who, { now: Date.now() - 10 * 60_000 })],
      [
        "saml_unknown_certificate",
        createSamlIdp(idp.entityId).then((rogue) =>
          signedResponse(rogue, {
            acsUrl: tenant.acsUrl,
            audience: tenant.entityId,
            nameId: mallory,
            attributes: { email: mallory },
          }),
        ),
      ],
    ];
    for (const [reason, xml] of cases) {
      const res = await postToAcs(tenant, await xml);
      expect(res.status, reason).toBe(400);
      expect((await problem(res)).reason, reason).toBe(reason);
    }
    const entries = await log(tenant);
    expect(entries.body.data.map((e: { reason: string }) => e.reason).sort()).toEqual(
      cases.map(([r]) => r).sort(),
    );
    const malformed = await call(tenant.acsUrl, {
      method: "POST",
      body: { SAMLResponse: "x" },
      headers: { "CF-Connecting-IP": freshIp() },
    });
    expect(malformed.status).toBe(415);
  });
});
