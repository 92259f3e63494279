import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { ssoDomains } from "../../src/db/schema";
import { institutionForSsoEmail } from "../../src/domains/institutions/sso/service";
import { database } from "../../src/platform/db";
import { txtText } from "../../src/platform/outbound/txt";
import { callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { dohStub, uniqueName } from "../helpers/receiver-doh";
import { createPlatformAdmin, createTenant, type Tenant } from "../helpers/tenants";

/**
 * SSO e-mail domains count for an institution only once proven (a DNS TXT record, or platform
 * staff); several institutions may claim one unverified; public mail domains are refused; no answer
 * tells one institution what another claimed. The resolver is the loopback DoH stub.
 */

const idp = inject("idpUrl");
const doh = dohStub();
const withDoh = { OUTBOUND_DOH_URL: doh.resolverUrl };

function putSso(tenant: Tenant, domains: string[], token = tenant.admin.token) {
  return callJson(`/api/institutions/${tenant.institution.id}/sso`, {
    method: "PUT",
    token,
    body: { type: "saml", domains, saml: {} },
  });
}

async function readSso(tenant: Tenant, token = tenant.admin.token) {
  return (await callJson(`/api/institutions/${tenant.institution.id}/sso`, { token })).body;
}

function verify(
  tenant: Tenant,
  domain: string,
  options: { token?: string; body?: unknown; env?: Partial<Cloudflare.Env> } = {},
) {
  return callJson(
    `/api/institutions/${tenant.institution.id}/sso/domains/${encodeURIComponent(domain)}/verify`,
    {
      method: "POST",
      token: options.token ?? tenant.admin.token,
      ...(options.body !== undefined ? { body: options.body } : {}),
      env: options.env ?? withDoh,
    },
  );
}

function verificationOf(sso: any, domain: string) {
  return sso.domain_verifications.find((v: any) => v.domain === domain);
}

describe("SSO domains: claims", () => {
  it("Acme's claim on Globex's domain is only pending, Globex may still claim it, and neither answer names the other", async () => {
    const [acme, globex] = await Promise.all([createTenant(), createTenant()]);
    const globexDomain = uniqueName("globex");
    const acmeDomain = uniqueName("acme");

    const claimed = await putSso(acme, [acmeDomain, globexDomain]);
    expect(claimed.res.status, JSON.stringify(claimed.body)).toBe(200);
    expect(claimed.body.domains).toEqual([acmeDomain, globexDomain].sort());
    expect(claimed.body.domain_verifications).toHaveLength(2);
    const pending = verificationOf(claimed.body, globexDomain);
    expect(pending).toEqual({
      domain: globexDomain,
      status: "pending",
      method: null,
      txt_name: globexDomain,
      txt_value: expect.stringMatching(/^lingua-domain-verification=[0-9a-f]{32}$/),
      verified_at: null,
    });

    const own = await putSso(globex, [globexDomain]);
    expect(own.res.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.domains).toEqual([globexDomain]);
    const globexPending = verificationOf(own.body, globexDomain);
    expect(globexPending.status).toBe("pending");
    // Each institution has its own token for the same domain.
    expect(globexPending.txt_value).not.toBe(pending.txt_value);

    for (const [tenant, other] of [
      [acme, globex],
      [globex, acme],
    ] as const) {
      const text = JSON.stringify(await readSso(tenant));
      expect(text).not.toContain(other.institution.id);
      expect(text).not.toContain(other.institution.slug);
    }
    expect(JSON.stringify(own.body)).not.toContain(pending.txt_value);
    expect(JSON.stringify(await readSso(acme))).not.toContain(globexPending.txt_value);
  });

  it("refuses public mail domains, naming each, and writes nothing", async () => {
    const tenant = await createTenant();
    const domain = uniqueName("school");
    const { res, body } = await putSso(tenant, [domain, "gmail.com", "Outlook.com", "mail.yahoo.com"]);
    expect(res.status).toBe(422);
    expect(body.code).toBe("validation_failed");
    expect(body.errors).toEqual([
      { path: "domains.1", message: expect.stringContaining("public e-mail provider") },
      { path: "domains.2", message: expect.stringContaining("public e-mail provider") },
      { path: "domains.3", message: expect.stringContaining("public e-mail provider") },
    ]);
    expect(await readSso(tenant)).toMatchObject({ type: null, domains: [], domain_verifications: [] });
  });

  it("keeps a domain's token and status across PUTs; removing it voids them, re-adding starts over", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    const [kept, dropped] = [uniqueName("kept"), uniqueName("dropped")];
    const first = await putSso(tenant, [kept, dropped]);
    const token = verificationOf(first.body, kept).txt_value;
    const droppedToken = verificationOf(first.body, dropped).txt_value;
    expect(
      (await verify(tenant, dropped, { token: staff.token, body: { method: "manual" } })).res.status,
    ).toBe(200);

    const again = await putSso(tenant, [kept, dropped]);
    expect(verificationOf(again.body, kept).txt_value).toBe(token);
    expect(verificationOf(again.body, dropped)).toMatchObject({
      status: "verified",
      txt_value: droppedToken,
    });

    const removed = await putSso(tenant, [kept]);
    expect(removed.body.domain_verifications.map((v: any) => v.domain)).toEqual([kept]);
    const readded = await putSso(tenant, [kept, dropped]);
    const fresh = verificationOf(readded.body, dropped);
    expect(fresh).toMatchObject({ status: "pending", verified_at: null, method: null });
    expect(fresh.txt_value).not.toBe(droppedToken);
    expect(verificationOf(readded.body, kept).txt_value).toBe(token);
  });
});

describe("SSO domains: verification", () => {
  it("verifies a domain whose TXT record carries the institution's value", async () => {
    const tenant = await createTenant();
    const domain = uniqueName("verified");
    const put = await putSso(tenant, [domain]);
    const { txt_name, txt_value } = verificationOf(put.body, domain);
    await doh.script({ [txt_name]: { TXT: ["v=spf1 -all", txt_value] } });

    const { res, body } = await verify(tenant, domain.toUpperCase());
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({
      domain,
      status: "verified",
      method: "dns",
      txt_name,
      txt_value,
      verified_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(verificationOf(await readSso(tenant), domain)).toEqual(body);
    expect(await doh.queries(domain)).toBeGreaterThan(0);
  });

  it.each([
    ["no TXT record", { A: ["93.184.215.14"] }, /no TXT record/],
    ["a name that does not exist", undefined, /does not exist/],
    ["a failing name server", { status: 2 }, /could not be resolved/],
  ])("answers 422 domain_not_verified for %s, and changes nothing", async (_what, records, message) => {
    const tenant = await createTenant();
    const domain = uniqueName("missing");
    await putSso(tenant, [domain]);
    if (records) await doh.script({ [domain]: records });
    const { res, body } = await verify(tenant, domain);
    expect(res.status).toBe(422);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(body).toMatchObject({ code: "domain_not_verified", domain_status: "pending" });
    expect(body.detail).toMatch(message);
    expect(verificationOf(await readSso(tenant), domain)).toMatchObject({
      status: "pending",
      verified_at: null,
    });
  });

  it("says what it found when no TXT record matches, without naming any other institution", async () => {
    const [acme, globex] = await Promise.all([createTenant(), createTenant()]);
    const domain = uniqueName("contested");
    await putSso(acme, [domain]);
    const globexValue = verificationOf((await putSso(globex, [domain])).body, domain).txt_value;
    await doh.script({ [domain]: { TXT: [globexValue] } });

    const { res, body } = await verify(acme, domain);
    expect(res.status).toBe(422);
    expect(body.code).toBe("domain_not_verified");
    expect(body.detail).toMatch(/found 1 TXT record at .* none is lingua-domain-verification=/);
    expect(JSON.stringify(body)).not.toContain(globex.institution.id);
    expect(JSON.stringify(body)).not.toContain(globexValue);
    expect(verificationOf(await readSso(acme), domain).status).toBe("pending");
  });

  it("DNS proof is authoritative: a later proof moves the verified claim, silently", async () => {
    const [acme, globex] = await Promise.all([createTenant(), createTenant()]);
    const domain = uniqueName("moved");
    const acmeValue = verificationOf((await putSso(acme, [domain])).body, domain).txt_value;
    const globexValue = verificationOf((await putSso(globex, [domain])).body, domain).txt_value;
    await doh.script({ [domain]: { TXT: [acmeValue] } });
    expect((await verify(acme, domain)).res.status).toBe(200);
    expect(await institutionForSsoEmail(testContext(), `ada@${domain}`)).toBe(acme.institution.id);

    await doh.script({ [domain]: { TXT: [globexValue] } });
    const moved = await verify(globex, domain);
    expect(moved.res.status).toBe(200);
    expect(JSON.stringify(moved.body)).not.toContain(acme.institution.id);
    expect(verificationOf(await readSso(acme), domain)).toMatchObject({
      status: "pending",
      verified_at: null,
    });
    expect(await institutionForSsoEmail(testContext(), `ada@${domain}`)).toBe(globex.institution.id);
  });

  it("two verifications at once leave exactly one institution holding the domain", async () => {
    const [acme, globex] = await Promise.all([createTenant(), createTenant()]);
    const staff = await createPlatformAdmin();
    const domain = uniqueName("race");
    await Promise.all([putSso(acme, [domain]), putSso(globex, [domain])]);
    const manual = { token: staff.token, body: { method: "manual" } };
    const answers = await Promise.all([verify(acme, domain, manual), verify(globex, domain, manual)]);
    expect(answers.map((a) => a.res.status)).toEqual([200, 200]);
    const rows = await database(env.DB)
      .select({ institutionId: ssoDomains.institutionId })
      .from(ssoDomains)
      .where(and(eq(ssoDomains.domain, domain), eq(ssoDomains.status, "verified")));
    expect(rows).toHaveLength(1);
    expect(await institutionForSsoEmail(testContext(), `ada@${domain}`)).toBe(rows[0]?.institutionId);
  });

  it("platform staff may confirm a domain without DNS; an institution admin may not", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    const domain = uniqueName("manual");
    await putSso(tenant, [domain]);

    const refused = await verify(tenant, domain, { body: { method: "manual" } });
    expect(refused.res.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");
    expect(verificationOf(await readSso(tenant), domain).status).toBe("pending");

    const confirmed = await verify(tenant, domain, { token: staff.token, body: { method: "manual" } });
    expect(confirmed.res.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body).toMatchObject({ domain, status: "verified", method: "manual" });
    expect(await doh.queries(domain)).toBe(0);
  });

  it("a public mail domain claimed before PUT refused them is never verified, by DNS or by staff", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    await putSso(tenant, [uniqueName("own")]);
    // As a claim stored by an earlier version, which accepted gmail.com at PUT.
    await database(env.DB).insert(ssoDomains).values({
      institutionId: tenant.institution.id,
      domain: "gmail.com",
      token: "legacytoken",
      status: "pending",
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    });
    await doh.script({ "gmail.com": { TXT: ["lingua-domain-verification=legacytoken"] } });

    for (const options of [{}, { token: staff.token, body: { method: "manual" } }]) {
      const { res, body } = await verify(tenant, "gmail.com", options);
      expect(res.status).toBe(422);
      expect(body).toMatchObject({ code: "domain_not_verified", reason: "public_mail_domain" });
    }
    expect(verificationOf(await readSso(tenant), "gmail.com").status).toBe("pending");
    expect(await institutionForSsoEmail(testContext(), "ada@gmail.com")).toBeNull();
  });

  it("404 for a domain not in the configuration or another institution's; 422 for a malformed body; 503 without a resolver", async () => {
    const [tenant, other] = await Promise.all([createTenant(), createTenant()]);
    const domain = uniqueName("configured");
    const othersDomain = uniqueName("others");
    await putSso(tenant, [domain]);
    await putSso(other, [othersDomain]);

    const unknown = await verify(tenant, othersDomain);
    expect(unknown.res.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
    expect((await verify(other, domain, { token: tenant.admin.token })).res.status).toBe(404);

    const bad = await verify(tenant, domain, { body: { method: "carrier-pigeon" } });
    expect(bad.res.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path)).toEqual(["method"]);

    const { learner } = tenant;
    expect((await verify(tenant, domain, { token: learner.token })).res.status).toBe(403);

    const unconfigured = await verify(tenant, domain, { env: { OUTBOUND_DOH_URL: "off" } });
    expect(unconfigured.res.status).toBe(503);
    expect(unconfigured.body.code).toBe("service_unavailable");
    expect(unconfigured.body.detail).toMatch(/resolver/);
    expect(verificationOf(await readSso(tenant), domain).status).toBe("pending");
  });
});

describe("SSO domains: the TXT lookup", () => {
  it("a resolver that fails is 503 with a sentence for the customer (no HTTP status, no parser output); nothing changes", async () => {
    const tenant = await createTenant();
    const domain = uniqueName("resolverdown");
    await putSso(tenant, [domain]);
    await doh.script({ [domain]: { status: "http-500" } });
    const { res, body } = await verify(tenant, domain);
    expect(res.status).toBe(503);
    expect(body.code).toBe("service_unavailable");
    expect(body.detail).toMatch(/resolver did not answer/);
    expect(body.detail).not.toMatch(/500|HTTP|zod|Expected/);
    expect(verificationOf(await readSso(tenant), domain).status).toBe("pending");
  });

  it("reads a long record split into quoted strings, with escapes, as one text", async () => {
    const tenant = await createTenant();
    const domain = uniqueName("long");
    const { txt_value } = verificationOf((await putSso(tenant, [domain])).body, domain);
    // 300 characters: the stub splits it into two quoted strings, as Cloudflare's resolver does.
    await doh.script({ [domain]: { TXT: [`padding "quoted" ${"x".repeat(280)}`, txt_value] } });
    expect((await verify(tenant, domain)).body.status).toBe("verified");
    expect(txtText('"lingua-domain-" "verification=ab"')).toBe("lingua-domain-verification=ab");
    expect(txtText('"say \\"hi\\" \\\\ \\065"')).toBe('say "hi" \\ A');
    expect(txtText("lingua-domain-verification=ab")).toBe("lingua-domain-verification=ab");
  });
});

describe("SSO domains: routing", () => {
  it("a verified domain routes its addresses to the institution; an unverified one routes nobody", async () => {
    const [acme, globex] = await Promise.all([createTenant(), createTenant()]);
    const staff = await createPlatformAdmin();
    const domain = uniqueName("routed");
    await putSso(acme, [domain]);
    await putSso(globex, [domain]);
    expect(await institutionForSsoEmail(testContext(), `grace@${domain}`)).toBeNull();

    await verify(globex, domain, { token: staff.token, body: { method: "manual" } });
    expect(await institutionForSsoEmail(testContext(), `Grace@${domain.toUpperCase()}`)).toBe(
      globex.institution.id,
    );
    expect(await institutionForSsoEmail(testContext(), `grace@sub.${domain}`)).toBeNull();
    expect(await institutionForSsoEmail(testContext(), "not an address")).toBeNull();
  });
});

describe("OIDC discovery: the endpoints pass the outbound gate", () => {
  let sequence = 0;
  async function issuerServing(fields: Record<string, string>) {
    sequence += 1;
    const path = `/idp/endpoints${Date.now().toString(36)}${sequence}`;
    const issuer = `${idp}${path}`;
    await fetch(`${idp}/control`, {
      method: "PUT",
      body: JSON.stringify({
        path: `${path}/.well-known/openid-configuration`,
        body: JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          ...fields,
        }),
      }),
    });
    return issuer;
  }

  it.each([
    ["authorization_endpoint", "javascript:alert(1)", /must be an http or https URL/],
    ["token_endpoint", "https://10.0.0.7/token", /private address/],
    ["jwks_uri", "https://169.254.169.254/jwks", /metadata/],
    ["authorization_endpoint", "https://idp.example/authorize#x", /fragment/],
  ])("refuses a discovery document whose %s is %s", async (field, value, message) => {
    const tenant = await createTenant();
    const issuer = await issuerServing({ [field]: value });
    const { res, body } = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
      method: "PUT",
      token: tenant.admin.token,
      body: { type: "oidc", oidc: { issuer, client_id: "c" } },
    });
    expect(res.status).toBe(422);
    expect(body.code).toBe("validation_failed");
    expect(body.errors).toEqual([
      { path: "oidc.issuer", message: expect.stringContaining(`discovery document's ${field}`) },
    ]);
    expect(body.errors[0].message).toMatch(message);
    expect((await readSso(tenant)).type).toBeNull();
  });

  it("judges what an endpoint's host name resolves to, as for the issuer", async () => {
    const tenant = await createTenant();
    const [inside, unpublished] = [uniqueName("idp-inside"), uniqueName("idp-unpublished")];
    await doh.script({ [inside]: { A: ["10.1.2.3"] } });
    const issuer = await issuerServing({
      token_endpoint: `https://${inside}/token`,
      jwks_uri: `https://${unpublished}/jwks`,
    });
    const { res, body } = await callJson(`/api/institutions/${tenant.institution.id}/sso`, {
      method: "PUT",
      token: tenant.admin.token,
      body: { type: "oidc", oidc: { issuer, client_id: "c" } },
      env: withDoh,
    });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([
      {
        path: "oidc.issuer",
        // The category only: the address a name resolves to is for the log, not the customer.
        message: expect.stringMatching(/token_endpoint must not resolve to a private address \("https:/),
      },
      { path: "oidc.issuer", message: expect.stringMatching(/jwks_uri must have a host name that resolves/) },
    ]);
    expect((await readSso(tenant)).type).toBeNull();
  });
});
