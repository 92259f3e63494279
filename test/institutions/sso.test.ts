import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { ssoConnections } from "../../src/db/schema";
import { openSealed, ssoClientSecretBinding } from "../../src/platform/crypto/sealed-values";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createPlatformAdmin, createTenant, type Tenant } from "../helpers/tenants";
import { base64Der, expiredCertificate, sha256Colons, validCertificate } from "./sso-certificates";

const idp = inject("idpUrl");
let sequence = 0;
function name(): string {
  sequence += 1;
  return `p${Date.now().toString(36)}${sequence}`;
}

function putSso(
  tenant: Tenant,
  body: unknown,
  token = tenant.admin.token,
  extra: Record<string, unknown> = {},
) {
  return callJson(`/api/institutions/${tenant.institution.id}/sso`, { method: "PUT", token, body, ...extra });
}

function paths(problem: any): string[] {
  return (problem.errors ?? []).map((e: any) => e.path);
}

async function script(path: string, answer: { status?: number; content_type?: string; body: string }) {
  await fetch(`${idp}/control`, { method: "PUT", body: JSON.stringify({ path, ...answer }) });
}

describe("SSO settings: OIDC", () => {
  it("answers type null before anything is configured", async () => {
    const tenant = await createTenant();
    const { res, body } = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
      token: tenant.admin.token,
    });
    expect(res.status).toBe(200);
    expect(body).toEqual({
      institution_id: tenant.institution.id,
      type: null,
      state: "inactive",
      enforced: false,
      domains: [],
      domain_verifications: [],
      saml: null,
      oidc: null,
      break_glass_admin_id: null,
      idp_may_grant_admin: false,
      updated_at: null,
    });
  });

  it("checks the issuer's discovery document, stores the secret sealed and never returns it", async () => {
    const tenant = await createTenant();
    const issuer = `${idp}/idp/${name()}`;
    const domain = `${name()}.acme.test`;
    const { res, body } = await putSso(tenant, {
      type: "oidc",
      state: "active",
      enforced: true,
      domains: [domain.toUpperCase()],
      oidc: { issuer, client_id: "lingua", client_secret: "s3cr3t-value", scopes: ["openid", "email"] },
    });
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      type: "oidc",
      state: "active",
      enforced: true,
      domains: [domain],
      saml: null,
      oidc: {
        issuer,
        client_id: "lingua",
        client_secret_set: true,
        scopes: ["openid", "email"],
        claim_mapping: { email: "email", name: "name", role: null, groups: "groups" },
        redirect_uri: `https://api.lingua.test/api/auth/sso/oidc/${tenant.institution.id}/callback`,
      },
    });
    expect(JSON.stringify(body)).not.toContain("s3cr3t-value");
    const stored = await database(env.DB)
      .select({ clientSecretSealed: ssoConnections.clientSecretSealed, oidc: ssoConnections.oidc })
      .from(ssoConnections)
      .where(eq(ssoConnections.institutionId, tenant.institution.id))
      .get();
    expect(stored?.clientSecretSealed).toMatch(/^v2\./);
    // Sealed for this institution's connection: it opens there, and nowhere else.
    const sealed = stored?.clientSecretSealed as string;
    expect(await openSealed(env, sealed, ssoClientSecretBinding(tenant.institution.id))).toBe("s3cr3t-value");
    await expect(openSealed(env, sealed, ssoClientSecretBinding("ins_other"))).rejects.toThrow();
    expect(JSON.stringify(stored)).not.toContain("s3cr3t-value");
    const read = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
      token: tenant.admin.token,
    });
    expect(read.body).toEqual(body);

    // Left out, the stored secret stays; null removes it, and an active connection then lacks it.
    const again = await putSso(tenant, {
      type: "oidc",
      state: "active",
      domains: [domain],
      oidc: { issuer, client_id: "lingua2" },
    });
    expect(again.res.status).toBe(200);
    expect(again.body.oidc).toMatchObject({ client_id: "lingua2", client_secret_set: true });
    const removed = await putSso(tenant, {
      type: "oidc",
      state: "active",
      domains: [domain],
      oidc: { issuer, client_id: "x", client_secret: null },
    });
    expect(removed.res.status).toBe(422);
    expect(paths(removed.body)).toEqual(["oidc.client_secret"]);
  });

  it("refuses a discovery document naming another issuer, an unreachable one, and non-https issuers", async () => {
    const tenant = await createTenant();
    const mismatched = `${idp}/idp/${name()}`;
    await script(`${new URL(mismatched).pathname}/.well-known/openid-configuration`, {
      body: JSON.stringify({ issuer: "https://login.other.example" }),
    });
    const failing = `${idp}/idp/${name()}`;
    await script(`${new URL(failing).pathname}/.well-known/openid-configuration`, {
      status: 500,
      body: "oops",
    });
    const notJson = `${idp}/idp/${name()}`;
    await script(`${new URL(notJson).pathname}/.well-known/openid-configuration`, { body: "<html>" });
    for (const [issuer, message] of [
      [mismatched, "names the issuer"],
      [failing, "HTTP 500"],
      [notJson, "not a JSON discovery document"],
      ["http://login.acme.example", "must be an https URL"],
      ["not a url", "absolute URL"],
    ] as const) {
      const { res, body } = await putSso(tenant, { type: "oidc", oidc: { issuer, client_id: "c" } });
      expect(res.status, issuer).toBe(422);
      expect(body.errors).toEqual([{ path: "oidc.issuer", message: expect.stringContaining(message) }]);
    }
    // Private and metadata addresses are refused by the outbound gate before any request; loopback
    // too where the deployment does not admit it (production).
    for (const issuer of [
      "https://10.0.0.7/realms/acme",
      "https://169.254.169.254/latest",
      "https://[fd00::1]/",
    ]) {
      const refused = await putSso(tenant, { type: "oidc", oidc: { issuer, client_id: "c" } });
      expect(refused.res.status, issuer).toBe(422);
      expect(paths(refused.body)).toEqual(["oidc.issuer"]);
    }
    const loopback = await putSso(
      tenant,
      { type: "oidc", oidc: { issuer: `${idp}/idp/${name()}`, client_id: "c" } },
      tenant.admin.token,
      { env: { ALLOW_LOOPBACK_TARGETS: "false" } },
    );
    expect(loopback.res.status).toBe(422);
    // Nothing was stored by any of them.
    const read = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
      token: tenant.admin.token,
    });
    expect(read.body.type).toBeNull();
  });

  it("active needs a complete configuration and a domain; enforced needs active; scopes need openid", async () => {
    const tenant = await createTenant();
    const issuer = `${idp}/idp/${name()}`;
    const draft = await putSso(tenant, { type: "oidc", oidc: { issuer } });
    expect(draft.res.status).toBe(200);
    expect(draft.body).toMatchObject({
      state: "draft",
      enforced: false,
      oidc: { client_id: null, client_secret_set: false },
    });
    const active = await putSso(tenant, { type: "oidc", state: "active", oidc: { issuer } });
    expect(active.res.status).toBe(422);
    expect(paths(active.body).sort()).toEqual(["domains", "oidc.client_id", "oidc.client_secret"]);
    const enforced = await putSso(tenant, { type: "oidc", enforced: true, oidc: { issuer } });
    expect(paths(enforced.body)).toEqual(["enforced"]);
    const scopes = await putSso(tenant, { type: "oidc", oidc: { issuer, scopes: ["email"] } });
    expect(paths(scopes.body)).toEqual(["oidc.scopes"]);
    const wrongObject = await putSso(tenant, { type: "oidc", saml: { sso_url: "https://x.example" } });
    expect(paths(wrongObject.body).sort()).toEqual(["oidc", "saml"]);
    const unknownField = await putSso(tenant, { type: "oidc", oidc: { issuer, client_secrets: "x" } });
    expect(unknownField.res.status).toBe(422);
  });
});

describe("SSO settings: SAML", () => {
  it("parses real certificates and answers subject, validity, fingerprint and our service provider", async () => {
    const tenant = await createTenant();
    const cert = await validCertificate("CN=idp.acme.test, O=Acme");
    const { res, body } = await putSso(tenant, {
      type: "saml",
      state: "active",
      domains: [`${name()}.acme.test`],
      saml: {
        idp_entity_id: "https://idp.acme.test/metadata",
        sso_url: "https://idp.acme.test/sso",
        certificates: [cert.pem],
        attribute_mapping: {
          email: "mail",
          name: "displayName",
          role: "eduPersonAffiliation",
          groups: "memberOf",
        },
      },
    });
    expect(res.status, JSON.stringify(body)).toBe(200);
    const id = tenant.institution.id;
    expect(body.saml).toMatchObject({
      idp_entity_id: "https://idp.acme.test/metadata",
      sso_url: "https://idp.acme.test/sso",
      metadata_url: null,
      attribute_mapping: {
        email: "mail",
        name: "displayName",
        role: "eduPersonAffiliation",
        groups: "memberOf",
      },
      sp: {
        entity_id: `https://api.lingua.test/api/institutions/${id}/sso/saml/metadata`,
        acs_url: `https://api.lingua.test/api/auth/sso/saml/${id}/acs`,
        metadata_url: `https://api.lingua.test/api/institutions/${id}/sso/saml/metadata`,
      },
    });
    expect(body.saml.certificates).toHaveLength(1);
    const info = body.saml.certificates[0];
    expect(info.subject).toBe("CN=idp.acme.test, O=Acme");
    expect(info.fingerprint_sha256).toBe(await sha256Colons(cert.der));
    expect(info.expired).toBe(false);
    expect(Date.parse(info.not_after)).toBeGreaterThan(Date.now() + 300 * 86_400_000);
    expect(Date.parse(info.not_before)).toBeLessThan(Date.now());
    expect(body.oidc).toBeNull();
  });

  it("refuses malformed and expired certificates and a non-https sso_url, naming each", async () => {
    const tenant = await createTenant();
    const [good, expired] = await Promise.all([validCertificate(), expiredCertificate()]);
    const broken = `-----BEGIN CERTIFICATE-----\n${base64Der(good.pem).slice(0, 120)}\n-----END CERTIFICATE-----`;
    const { res, body } = await putSso(tenant, {
      type: "saml",
      saml: {
        sso_url: "http://idp.acme.test/sso",
        certificates: [broken, good.pem, expired.pem, "hello"],
      },
    });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([
      { path: "saml.sso_url", message: "must be an https URL" },
      { path: "saml.certificates.0", message: expect.stringContaining("well-formed") },
      { path: "saml.certificates.2", message: expect.stringMatching(/^expired on \d{4}-/) },
      { path: "saml.certificates.3", message: expect.stringContaining("PEM") },
    ]);
  });

  it("fills the fields from IdP metadata, inline or fetched from its URL", async () => {
    const tenant = await createTenant();
    const cert = await validCertificate("CN=metadata.acme.test");
    const xml = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.acme.test/entity">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
      ${base64Der(cert.pem)}
    </ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.acme.test/sso/post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.acme.test/sso/redirect"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
    const inline = await putSso(tenant, { type: "saml", saml: { metadata_xml: xml } });
    expect(inline.res.status, JSON.stringify(inline.body)).toBe(200);
    expect(inline.body.saml).toMatchObject({
      idp_entity_id: "https://idp.acme.test/entity",
      sso_url: "https://idp.acme.test/sso/redirect",
      metadata_url: null,
    });
    expect(inline.body.saml.certificates.map((c: any) => c.fingerprint_sha256)).toEqual([
      await sha256Colons(cert.der),
    ]);

    const path = `/metadata/${name()}.xml`;
    await script(path, { content_type: "application/samlmetadata+xml", body: xml });
    const fetched = await putSso(tenant, {
      type: "saml",
      saml: { metadata_url: `${idp}${path}`, sso_url: "https://idp.acme.test/override" },
    });
    expect(fetched.res.status, JSON.stringify(fetched.body)).toBe(200);
    expect(fetched.body.saml).toMatchObject({
      idp_entity_id: "https://idp.acme.test/entity",
      sso_url: "https://idp.acme.test/override",
      metadata_url: `${idp}${path}`,
    });

    const bad = await putSso(tenant, { type: "saml", saml: { metadata_xml: "<not-closed" } });
    expect(paths(bad.body)).toEqual(["saml.metadata_xml"]);
    const missing = await putSso(tenant, {
      type: "saml",
      saml: { metadata_url: `${idp}/metadata/${name()}-absent.xml` },
    });
    expect(missing.body.errors).toEqual([
      { path: "saml.metadata_url", message: expect.stringContaining("HTTP 404") },
    ]);
  });

  it("active SAML needs entity id, sso_url and a certificate", async () => {
    const tenant = await createTenant();
    const { res, body } = await putSso(tenant, {
      type: "saml",
      state: "active",
      domains: [`${name()}.acme.test`],
      saml: {},
    });
    expect(res.status).toBe(422);
    expect(paths(body).sort()).toEqual(["saml.certificates", "saml.idp_entity_id", "saml.sso_url"]);
  });
});

describe("SSO settings: attribute and claim mappings", () => {
  it("needs only email; a key left out or null is not mapped and answered null; no mapping is the defaults", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const read = async () =>
      (await callJson(`/api/institutions/${id}/sso`, { token: tenant.admin.token })).body;

    // SAML with what the IdP sends: e-mail and name.
    const saml = await putSso(tenant, {
      type: "saml",
      saml: { attribute_mapping: { email: "mail", name: "displayName" } },
    });
    expect(saml.res.status, JSON.stringify(saml.body)).toBe(200);
    expect(saml.body.saml.attribute_mapping).toEqual({
      email: "mail",
      name: "displayName",
      role: null,
      groups: null,
    });
    expect((await read()).saml.attribute_mapping).toEqual(saml.body.saml.attribute_mapping);

    // OIDC with e-mail alone; null and left out are the same. Left out, groups is not mapped either
    // (the default `groups` applies only when the whole mapping is left out).
    for (const claim_mapping of [{ email: "upn" }, { email: "upn", name: null, role: null, groups: null }]) {
      const oidc = await putSso(tenant, { type: "oidc", oidc: { claim_mapping } });
      expect(oidc.res.status, JSON.stringify(oidc.body)).toBe(200);
      const mapped = { email: "upn", name: null, role: null, groups: null };
      expect(oidc.body.oidc.claim_mapping).toEqual(mapped);
      expect((await read()).oidc.claim_mapping).toEqual(mapped);
    }
    const roles = await putSso(tenant, {
      type: "oidc",
      oidc: { claim_mapping: { email: "email", role: "lingua_role" } },
    });
    expect(roles.body.oidc.claim_mapping).toEqual({
      email: "email",
      name: null,
      role: "lingua_role",
      groups: null,
    });

    const defaults = await putSso(tenant, { type: "oidc", oidc: {} });
    expect(defaults.body.oidc.claim_mapping).toEqual({
      email: "email",
      name: "name",
      role: null,
      groups: "groups",
    });
    const samlDefaults = await putSso(tenant, { type: "saml", saml: {} });
    expect(samlDefaults.body.saml.attribute_mapping).toEqual({
      email: "email",
      name: "name",
      role: null,
      groups: null,
    });
  });

  it("refuses a mapping without email, with an empty or unknown key, and changes nothing", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const first = await putSso(tenant, { type: "saml", saml: { attribute_mapping: { email: "mail" } } });
    expect(first.res.status).toBe(200);
    for (const [body, path] of [
      [
        { type: "saml", saml: { attribute_mapping: { name: "displayName" } } },
        "saml.attribute_mapping.email",
      ],
      [
        { type: "saml", saml: { attribute_mapping: { email: "mail", role: "" } } },
        "saml.attribute_mapping.role",
      ],
      [
        { type: "oidc", oidc: { claim_mapping: { email: "email", department: "dept" } } },
        "oidc.claim_mapping.department",
      ],
    ] as const) {
      const res = await putSso(tenant, body);
      expect(res.res.status, JSON.stringify(res.body)).toBe(422);
      expect(paths(res.body), JSON.stringify(res.body)).toContain(path);
    }
    const after = await callJson(`/api/institutions/${id}/sso`, { token: tenant.admin.token });
    expect(after.body).toEqual(first.body);
  });
});

describe("SSO settings: domains and tenancy", () => {
  it("several institutions may claim one domain; none is told of the other's claim", async () => {
    const [a, b] = await Promise.all([createTenant(), createTenant()]);
    const domain = `${name()}.school.test`;
    const first = await putSso(a, { type: "saml", domains: [domain, `www.${domain}`], saml: {} });
    expect(first.res.status).toBe(200);
    expect(first.body.domains).toEqual([domain, `www.${domain}`].sort());
    const second = await putSso(b, { type: "saml", domains: [`other.${domain}`, domain], saml: {} });
    expect(second.res.status).toBe(200);
    expect(second.body.domains).toEqual([domain, `other.${domain}`].sort());
    expect(second.body.domain_verifications.map((v: any) => v.status)).toEqual(["pending", "pending"]);
    expect(JSON.stringify(second.body)).not.toContain(a.institution.id);
    expect((await putSso(a, { type: "saml", domains: [], saml: {} })).res.status).toBe(200);
    const invalid = await putSso(b, { type: "saml", domains: ["not a domain", domain, domain], saml: {} });
    expect(paths(invalid.body)).toContain("domains.0");
  });

  it("another institution's id is 404; instructors and learners have no sso abilities; staff act on every institution", async () => {
    const [a, b] = await Promise.all([createTenant(), createTenant()]);
    const staff = await createPlatformAdmin();
    const other = await callJson(`/api/institutions/${b.institution.id}/sso`, { token: a.admin.token });
    expect(other.res.status).toBe(404);
    const otherPut = await putSso(b, { type: "saml", saml: {} }, a.admin.token);
    expect(otherPut.res.status).toBe(404);
    for (const user of [a.instructor, a.learner]) {
      const read = await callJson(`/api/institutions/${a.institution.id}/sso`, { token: user.token });
      expect(read.res.status).toBe(403);
      expect(read.body.detail).toContain("sso:read");
      const write = await putSso(a, { type: "saml", saml: {} }, user.token);
      expect(write.res.status).toBe(403);
    }
    const byStaff = await putSso(b, { type: "saml", saml: {} }, staff.token);
    expect(byStaff.res.status).toBe(200);
    expect(
      (await callJson(`/api/institutions/${b.institution.id}/sso`, { token: staff.token })).body.type,
    ).toBe("saml");
    expect((await callJson(`/api/institutions/ins_missing/sso`, { token: staff.token })).res.status).toBe(
      404,
    );
  });
});
