// SAML over HTTP: our SP metadata, the IdP-initiated setting, the replay cache, and sign-in through
// the ACS with Responses signed by the test IdP (test/helpers/saml-idp.ts).
import { DOMParser } from "@xmldom/xmldom";
import { beforeAll, describe, expect, it } from "vitest";
import { acceptAssertionOnce } from "../../src/domains/sso/saml/replay";
import { call, callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createSamlIdp, type SamlIdp, samlId } from "../helpers/saml-idp";
import { createTenant, type Tenant } from "../helpers/tenants";

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
