import { describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { createTenant, type Tenant } from "../helpers/tenants";
import { base64Der, expiredCertificate, validCertificate } from "../institutions/sso-certificates";
import { Browser, csrfOf, textOf } from "./support";

const SETTINGS = "/dashboard/settings/institution";
const SSO = `${SETTINGS}/sso`;

async function adminOf(tenant: Tenant) {
  const browser = new Browser();
  expect((await browser.signIn(tenant.admin.email)).status).toBe(303);
  return browser;
}

function institutionOf(tenant: Tenant) {
  return callJson(`/api/institutions/${tenant.institution.id}`, { token: tenant.admin.token });
}

const general = (extra: Record<string, string> = {}) => ({
  name: "Renamed Academy",
  display_name: "Renamed",
  logo_url: "",
  primary_color: "#0b7a3e",
  accent_color: "#c2410c",
  locale: "en-GB",
  time_zone: "Europe/London",
  ...extra,
});

describe("dashboard: institution settings", () => {
  it("changes name, branding, locale and time zone as the API then reads them; analytics wears the branding", async () => {
    const tenant = await createTenant();
    const browser = await adminOf(tenant);
    const page = await browser.get(SETTINGS);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`value="Test institution`);
    const res = await browser.post(SETTINGS, { _csrf: csrfOf(html), ...general() });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe(`${SETTINGS}?notice=saved`);
    const { body } = await institutionOf(tenant);
    expect(body).toMatchObject({
      name: "Renamed Academy",
      locale: "en-GB",
      time_zone: "Europe/London",
      branding: {
        display_name: "Renamed",
        logo_url: null,
        primary_color: "#0b7a3e",
        accent_color: "#c2410c",
      },
    });
    const analytics = await (await browser.get("/dashboard/analytics")).text();
    expect(textOf(analytics)).toContain("Renamed · Analytics");
    expect(analytics).toContain("theme.css?primary=0b7a3e&amp;accent=c2410c");
    // Emptied fields clear the branding.
    await browser.post(SETTINGS, {
      _csrf: csrfOf(html),
      ...general({ display_name: "", primary_color: "", accent_color: "" }),
    });
    expect((await institutionOf(tenant)).body.branding).toEqual({
      display_name: null,
      logo_url: null,
      primary_color: null,
      accent_color: null,
    });
  });

  it("shows validation errors by their labels and changes nothing; warns about low contrast", async () => {
    const tenant = await createTenant();
    const browser = await adminOf(tenant);
    const csrf = csrfOf(await (await browser.get(SETTINGS)).text());
    const before = (await institutionOf(tenant)).body;
    for (const [fields, message] of [
      [{ primary_color: "green" }, "Primary colour: must be a colour as #rrggbb"],
      [{ logo_url: "http://cdn.example.test/logo.png" }, "Logo URL: must be an https URL"],
      [{ time_zone: "Mars/Olympus" }, "Time zone: must be an IANA time zone"],
      [{ locale: "not a locale!" }, "Locale: must be a BCP 47 language tag"],
    ] as const) {
      const res = await browser.post(SETTINGS, { _csrf: csrf, ...general(fields) });
      expect([fields, res.status]).toEqual([fields, 422]);
      const text = textOf(await res.text());
      expect(text).toContain(message);
    }
    expect((await institutionOf(tenant)).body).toEqual(before);

    const pale = await browser.post(SETTINGS, {
      _csrf: csrf,
      ...general({ primary_color: "#ffee58", accent_color: "#fff59d" }),
    });
    expect(pale.status).toBe(303);
    const text = textOf(await (await browser.get(SETTINGS)).text());
    expect(text).toMatch(
      /Primary colour #ffee58: white text on it has a contrast of 1\.\d:1, below the 4\.5:1/,
    );
    expect(text).toMatch(/Accent colour #fff59d: on white it has a contrast of 1\.\d:1, below the 3:1/);
  });

  it("refuses a forged or cross-site form and changes nothing", async () => {
    const tenant = await createTenant();
    const browser = await adminOf(tenant);
    const csrf = csrfOf(await (await browser.get(SETTINGS)).text());
    const before = (await institutionOf(tenant)).body;
    expect((await browser.post(SETTINGS, { _csrf: "forged", ...general() })).status).toBe(403);
    expect(
      (await browser.post(SETTINGS, { _csrf: csrf, ...general() }, { Origin: "https://evil.example" }))
        .status,
    ).toBe(403);
    expect((await browser.post(SSO, { _csrf: "forged", type: "saml" })).status).toBe(403);
    expect((await institutionOf(tenant)).body).toEqual(before);
  });

  it("sets up SAML from pasted metadata: certificates with subject and expiry, the SP values, the domains' DNS records", async () => {
    const tenant = await createTenant();
    const browser = await adminOf(tenant);
    const empty = await (await browser.get(SETTINGS)).text();
    expect(textOf(empty)).toContain("Single sign-on Not set up");
    expect(textOf(empty)).toContain("Compliance documents");
    expect(textOf(empty)).toContain("Data processing agreement (DPA) Yes not started");
    const cert = await validCertificate("CN=idp.fixture.test");
    const xml = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.fixture.test/entity">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${base64Der(cert.pem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.fixture.test/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
    const form = await (await browser.get(SSO)).text();
    const res = await browser.post(SSO, {
      _csrf: csrfOf(form),
      type: "saml",
      source: "xml",
      metadata_xml: xml,
      domains: "fixture-university.test\n",
      state: "draft",
    });
    expect(res.status, textOf(await res.clone().text())).toBe(303);
    const { body: sso } = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
      token: tenant.admin.token,
    });
    expect(sso).toMatchObject({
      type: "saml",
      state: "draft",
      domains: ["fixture-university.test"],
      saml: { idp_entity_id: "https://idp.fixture.test/entity", sso_url: "https://idp.fixture.test/sso" },
    });
    const page = await (await browser.get(`${SETTINGS}?notice=sso`)).text();
    const text = textOf(page);
    expect(text).toContain("The SSO settings were saved.");
    expect(text).toContain("CN=idp.fixture.test");
    expect(page).toContain(`<time datetime="${sso.saml.certificates[0].not_after}">`);
    expect(page).toContain(`value="${sso.saml.sp.acs_url}"`);
    expect(page).toContain('data-copy="sp-entity-id"');
    expect(page).toContain(`value="${sso.domain_verifications[0].txt_value}"`);
    expect(text).toContain("TXT at fixture-university.test");

    // The edit form comes back filled in with what is stored.
    const again = await (await browser.get(SSO)).text();
    expect(again).toContain('value="https://idp.fixture.test/sso"');
    expect(again).toContain("fixture-university.test</textarea>");
  });

  it("shows the SSO service's refusals next to the form and keeps what was stored", async () => {
    const tenant = await createTenant();
    const browser = await adminOf(tenant);
    const csrf = csrfOf(await (await browser.get(SSO)).text());
    const old = await expiredCertificate();
    const res = await browser.post(SSO, {
      _csrf: csrf,
      type: "saml",
      source: "fields",
      sso_url: "http://idp.fixture.test/sso",
      certificates: old.pem,
      domains: "gmail.com",
      state: "draft",
    });
    expect(res.status).toBe(422);
    const text = textOf(await res.text());
    expect(text).toContain("Domains: is a public e-mail provider's domain");
    const after = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
      token: tenant.admin.token,
    });
    expect(after.body.type).toBeNull();
    const refused = await browser.post(SSO, {
      _csrf: csrf,
      type: "saml",
      source: "fields",
      sso_url: "http://idp.fixture.test/sso",
      certificates: old.pem,
      state: "draft",
    });
    expect(refused.status).toBe(422);
    const refusedHtml = await refused.text();
    const refusedText = textOf(refusedHtml);
    // The form keeps what was typed.
    expect(refusedHtml).toContain('value="http://idp.fixture.test/sso"');
    expect(refusedText).toContain("IdP sign-in URL:");
    expect(refusedText).toContain("Certificates:");
  });
});
