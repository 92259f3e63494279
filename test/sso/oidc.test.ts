import { env } from "cloudflare:test";
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate } from "@peculiar/asn1-x509";
import { eq } from "drizzle-orm";
import { decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import { describe, expect, inject, it } from "vitest";
import { ssoConnections, ssoSigningKeys, users } from "../../src/db/schema";
import { clientAssertionForm } from "../../src/domains/sso/oidc/client-keys";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createTenant, freshIp, insertUser, PASSWORD } from "../helpers/tenants";
import { uploadCsv } from "../members/support";
import {
  codeOf,
  exchange,
  type OidcTenant,
  oidcTenant,
  op,
  person,
  signInThroughProvider,
} from "./oidc-browser";
import { platformStaff, putSso, stateCookieOf, uniqueName } from "./support";

/**
 * OIDC sign-in against a real OpenID Provider on loopback (oidc-provider, test/sso/openid-provider.ts):
 * the whole authorization code flow with PKCE — the test plays the browser — and each refusal. ID
 * tokens a real provider never issues (alg none, another audience, expired, a replayed nonce) come
 * from the provider's token endpoint altered by its test proxy, re-signed with its own key.
 */

const db = () => database(env.DB);

async function tamperNextToken(tenant: OidcTenant, mode: string) {
  await fetch(`${op}/control/tamper`, {
    method: "PUT",
    body: JSON.stringify({ client_id: tenant.clientId, mode }),
  });
}

async function refusal(res: Response) {
  const body = (await res.json()) as Record<string, any>;
  return {
    status: res.status,
    code: body.code,
    reason: body.reason,
    signInId: body.sign_in_id,
    detail: body.detail,
  };
}

async function lastLogEntry(tenant: OidcTenant) {
  const { body } = await callJson(`/api/institutions/${tenant.institution.id}/sso/log?per_page=1`, {
    token: tenant.admin.token,
  });
  return body.data[0];
}

describe("OIDC sign-in with a real OpenID Provider", () => {
  it("the whole code flow: PKCE, a verified ID token, a member created just in time, a single-use code, a session", async () => {
    const tenant = await oidcTenant({
      claimMapping: { email: "email", name: "name", groups: "groups", role: "role" },
    });
    const who = await person(tenant, { groups: ["Year 9", "Chess club"], role: "instructor" });
    const { res, callbackUrl } = await signInThroughProvider(tenant, who);
    expect(callbackUrl.searchParams.get("code")).toBeTruthy();
    expect(res.status, await res.clone().text()).toBe(303);
    const session = await exchange(codeOf(res));
    expect(session.res.status).toBe(200);
    expect(session.body).toMatchObject({
      token_type: "Bearer",
      user: {
        email: who.email,
        name: "Ada Lovelace",
        role: "instructor",
        institution_id: tenant.institution.id,
      },
    });
    const members = await callJson(
      `/api/institutions/${tenant.institution.id}/members?q=${encodeURIComponent(who.email)}`,
      {
        token: tenant.admin.token,
      },
    );
    const member = members.body.data.find((m: any) => m.email === who.email);
    expect(member).toMatchObject({ status: "active", role: "instructor", groups: ["Chess club", "Year 9"] });
    expect(await lastLogEntry(tenant)).toMatchObject({
      protocol: "oidc",
      status: "succeeded",
      reason: null,
      subject: who.sub,
      email: who.email,
      user_id: session.body.user.id,
      provisioned: true,
    });

    // The same callback again: the state is spent.
    const replay = await call(`${callbackUrl.pathname}${callbackUrl.search}`, {
      headers: {
        "CF-Connecting-IP": freshIp(),
        Cookie: (await signInThroughProvider(tenant, who)).stateCookie,
      },
    });
    expect(await refusal(replay)).toMatchObject({
      status: 400,
      code: "sso_sign_in_refused",
      reason: "state_used",
    });
  });

  it("an invited member becomes active at the first sign-in; a suspended one is refused", async () => {
    const tenant = await oidcTenant();
    const who = await person(tenant);
    const invited = await callJson(`/api/institutions/${tenant.institution.id}/members`, {
      token: tenant.admin.token,
      body: { email: who.email, name: "Invited Ada", role: "learner" },
    });
    expect(invited.res.status).toBe(201);
    const first = await signInThroughProvider(tenant, who);
    expect(first.res.status).toBe(303);
    const session = await exchange(codeOf(first.res));
    expect(session.body.user).toMatchObject({ id: invited.body.id, name: "Ada Lovelace" });
    const member = await callJson(`/api/institutions/${tenant.institution.id}/members/${invited.body.id}`, {
      token: tenant.admin.token,
    });
    expect(member.body.status).toBe("active");

    await callJson(`/api/institutions/${tenant.institution.id}/members/${invited.body.id}`, {
      method: "PATCH",
      token: tenant.admin.token,
      body: { status: "suspended" },
    });
    const again = await signInThroughProvider(tenant, who);
    expect(await refusal(again.res)).toMatchObject({ status: 400, reason: "member_suspended" });
    expect(await lastLogEntry(tenant)).toMatchObject({
      status: "refused",
      reason: "member_suspended",
      user_id: null,
    });
  });

  it("refuses an unverified e-mail address", async () => {
    const tenant = await oidcTenant();
    const who = await person(tenant, { email_verified: false });
    const { res } = await signInThroughProvider(tenant, who);
    const refused = await refusal(res);
    expect(refused).toMatchObject({ status: 400, reason: "email_unverified" });
    expect(await lastLogEntry(tenant)).toMatchObject({
      id: refused.signInId,
      reason: "email_unverified",
      email: who.email,
    });
  });

  it("refuses a callback without the browser's cookie, and a forged state", async () => {
    const tenant = await oidcTenant();
    const who = await person(tenant);
    const missing = await signInThroughProvider(tenant, who, { cookie: null });
    expect(await refusal(missing.res)).toMatchObject({ reason: "browser_binding_missing" });
    const forged = await call(
      `/api/auth/sso/oidc/${tenant.institution.id}/callback?code=abc&state=${uniqueName("forged")}`,
      { headers: { "CF-Connecting-IP": freshIp() } },
    );
    expect(await refusal(forged)).toMatchObject({ status: 400, reason: "state_unknown" });
  });

  for (const [mode, reason] of [
    ["alg_none", "alg_not_allowed"],
    ["hs256", "alg_not_allowed"],
    ["wrong_audience", "audience_mismatch"],
    ["azp", "azp_mismatch"],
    ["wrong_issuer", "issuer_mismatch"],
    ["expired", "token_expired"],
    ["replayed_nonce", "nonce_mismatch"],
  ] as const) {
    it(`refuses an ID token with ${mode.replace("_", " ")} (${reason}) and creates nobody`, async () => {
      const tenant = await oidcTenant();
      const who = await person(tenant);
      if (mode === "replayed_nonce") {
        // A first sign-in gives the provider's proxy a nonce to replay.
        const first = await signInThroughProvider(tenant, await person(tenant));
        expect(first.res.status).toBe(303);
      }
      await tamperNextToken(tenant, mode);
      const { res } = await signInThroughProvider(tenant, who);
      expect(await refusal(res)).toMatchObject({ status: 400, code: "sso_sign_in_refused", reason });
      expect(await db().select().from(users).where(eq(users.email, who.email)).get()).toBeUndefined();
      expect(await lastLogEntry(tenant)).toMatchObject({ status: "refused", reason });
    });
  }

  it("refuses an answer naming another issuer (RFC 9207, mix-up)", async () => {
    const tenant = await oidcTenant();
    const who = await person(tenant);
    const { res } = await signInThroughProvider(tenant, who, {
      beforeCallback: (url) => {
        // The provider names itself in its answer; an attacker's provider would name itself.
        expect(url.searchParams.get("iss")).toBe(op);
        url.searchParams.set("iss", "https://evil.example");
      },
    });
    expect(await refusal(res)).toMatchObject({ status: 400, reason: "issuer_mismatch" });
  });

  it("refuses the provider's answer of an error", async () => {
    const tenant = await oidcTenant();
    const begin = await callJson(`/api/auth/sso?institution=${tenant.institution.slug}`, {
      headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
    });
    const state = new URL(begin.body.redirect_url).searchParams.get("state");
    const res = await call(
      `/api/auth/sso/oidc/${tenant.institution.id}/callback?error=access_denied&error_description=User+cancelled&state=${state}`,
      { headers: { "CF-Connecting-IP": freshIp(), Cookie: stateCookieOf(begin.res) } },
    );
    const refused = await refusal(res);
    expect(refused).toMatchObject({ status: 400, reason: "idp_error" });
    expect(refused.detail).toContain("access_denied: User cancelled");
  });
});

describe("enforced SSO", () => {
  it("refuses a password for the domain with sso_required and the URL; staff and the break-glass admin keep theirs", async () => {
    const tenant = await oidcTenant();
    const domainUser = await insertUser("learner", tenant.institution.id);
    const email = `${uniqueName("pw")}@${tenant.domain}`;
    await db().update(users).set({ email }).where(eq(users.id, domainUser.id));
    const breakGlass = await insertUser("institution_admin", tenant.institution.id);
    const breakGlassEmail = `${uniqueName("bg")}@${tenant.domain}`;
    await db().update(users).set({ email: breakGlassEmail }).where(eq(users.id, breakGlass.id));
    const staff = await insertUser("platform_admin", null);
    const staffEmail = `${uniqueName("staff")}@${tenant.domain}`;
    await db().update(users).set({ email: staffEmail }).where(eq(users.id, staff.id));

    const enforce = await putSso(tenant, {
      type: "oidc",
      state: "active",
      enforced: true,
      domains: [tenant.domain],
      oidc: { issuer: op, client_id: tenant.clientId },
      break_glass_admin_id: breakGlass.id,
    });
    expect(enforce.res.status, JSON.stringify(enforce.body)).toBe(200);
    expect(enforce.body.break_glass_admin_id).toBe(breakGlass.id);

    const signIn = (address: string, password = PASSWORD) =>
      callJson("/api/auth/sign-in", {
        body: { email: address, password },
        headers: { "CF-Connecting-IP": freshIp() },
      });
    const refused = await signIn(email.toUpperCase());
    expect(refused.res.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: "sso_required",
      sso_url: `https://api.lingua.test/api/auth/sso?email=${encodeURIComponent(email)}`,
    });
    // A wrong password gets the same answer: the password is not looked at.
    expect((await signIn(email, "wrong")).body.code).toBe("sso_required");
    // Nobody at the domain yet: the same.
    expect((await signIn(`${uniqueName("new")}@${tenant.domain}`)).body.code).toBe("sso_required");
    expect((await signIn(breakGlassEmail)).res.status).toBe(200);
    expect((await signIn(staffEmail)).res.status).toBe(200);
    expect((await signIn(tenant.admin.email)).res.status).toBe(200);

    // No invitations for the domain, one by one or in bulk.
    const invite = await callJson(`/api/institutions/${tenant.institution.id}/members`, {
      token: tenant.admin.token,
      body: { email: `${uniqueName("inv")}@${tenant.domain}`, name: "Invitee", role: "learner" },
    });
    expect(invite.res.status).toBe(409);
    expect(invite.body).toMatchObject({ code: "sso_enforced", domain: tenant.domain });
    const elsewhere = `${uniqueName("ext")}@example.test`;
    const bulk = await uploadCsv(
      tenant.admin.token,
      tenant.institution.id,
      `email,name\r\n${uniqueName("b")}@${tenant.domain},At The Domain\r\n${elsewhere},Elsewhere\r\n`,
    );
    expect(bulk.res.status, JSON.stringify(bulk.body)).toBe(200);
    expect(bulk.body.rows.map((r: any) => [r.line, r.outcome])).toEqual([
      [2, "rejected"],
      [3, "created"],
    ]);
    expect(bulk.body.rows[0].errors[0]).toMatch(/^sso_enforced: /);

    // The break-glass admin must be an active admin of the institution.
    const wrong = await putSso(tenant, {
      type: "oidc",
      state: "active",
      enforced: true,
      domains: [tenant.domain],
      oidc: { issuer: op, client_id: tenant.clientId },
      break_glass_admin_id: domainUser.id,
    });
    expect(wrong.res.status).toBe(422);
    expect(wrong.body.errors).toEqual([
      {
        path: "break_glass_admin_id",
        message: "must be the id of an active institution_admin of this institution",
      },
    ]);
  });
});

describe("OIDC sign-in with private_key_jwt (RFC 7523 client assertions)", () => {
  const idp = inject("idpUrl");

  /** Publishes a key set where the provider fetches the client's keys (a loopback URL). */
  async function publishAt(path: string, jwks: unknown) {
    await fetch(`${idp}/control`, {
      method: "PUT",
      body: JSON.stringify({ path, body: JSON.stringify(jwks) }),
    });
  }

  async function linguaJwks(tenant: { institution: { id: string } }) {
    const { res, body } = await callJson(`/api/institutions/${tenant.institution.id}/sso/oidc/jwks`);
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body as { keys: Array<Record<string, string>> };
  }

  /**
   * A tenant whose OIDC connection authenticates with private_key_jwt and no client secret; the
   * provider's client fetches its keys from `keysPath` on the loopback IdP, where the test copies what
   * Lingua's JWKS answers (the provider cannot reach the worker under test itself).
   */
  async function privateKeyJwtTenant(): Promise<OidcTenant & { keysPath: string }> {
    const tenant = await createTenant();
    const keysPath = `/keys/${uniqueName("k")}`;
    const res = await fetch(`${op}/reg`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        redirect_uris: [`https://api.lingua.test/api/auth/sso/oidc/${tenant.institution.id}/callback`],
        response_types: ["code"],
        grant_types: ["authorization_code"],
        token_endpoint_auth_method: "private_key_jwt",
        token_endpoint_auth_signing_alg: "RS256",
        jwks_uri: `${idp}${keysPath}`,
      }),
    });
    const client = (await res.json()) as { client_id: string };
    expect(res.status, JSON.stringify(client)).toBe(201);
    const domain = `${uniqueName("d")}.school.test`;
    const put = await putSso(tenant, {
      type: "oidc",
      state: "active",
      domains: [domain],
      oidc: { issuer: op, client_id: client.client_id, token_endpoint_auth_method: "private_key_jwt" },
    });
    expect(put.res.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.oidc).toMatchObject({
      client_secret_set: false,
      token_endpoint_auth_method: "private_key_jwt",
      jwks_uri: `https://api.lingua.test/api/institutions/${tenant.institution.id}/sso/oidc/jwks`,
    });
    const verified = await callJson(
      `/api/institutions/${tenant.institution.id}/sso/domains/${domain}/verify`,
      { method: "POST", token: (await platformStaff()).token, body: { method: "manual" } },
    );
    expect(verified.res.status).toBe(200);
    return { ...tenant, domain, issuer: op, clientId: client.client_id, keysPath };
  }

  it("signs in with a client assertion the provider verifies against Lingua's published key", async () => {
    const tenant = await privateKeyJwtTenant();
    const jwks = await linguaJwks(tenant);
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
    expect(jwks.keys[0]).not.toHaveProperty("d");
    await publishAt(tenant.keysPath, jwks);
    const who = await person(tenant);
    const { res } = await signInThroughProvider(tenant, who);
    expect(res.status, await res.clone().text()).toBe(303);
    const session = await exchange(codeOf(res));
    expect(session.res.status).toBe(200);
    expect(session.body.user.email).toBe(who.email);
    expect(await lastLogEntry(tenant)).toMatchObject({ status: "succeeded", subject: who.sub });
  });

  it("Entra: every key has a self-signed certificate — in the JWKS (x5c, x5t, x5t#S256) and as a PEM download — and the assertion's header names it", async () => {
    const tenant = await privateKeyJwtTenant();
    const id = tenant.institution.id;
    const [key] = (await linguaJwks(tenant)).keys as unknown as Array<
      Record<string, string> & { x5c: string[] }
    >;
    if (!key) throw new Error("no key");
    expect(key.x5c).toHaveLength(1);
    const der = Uint8Array.from(atob(key.x5c[0] as string), (c) => c.charCodeAt(0));
    // The thumbprints, computed here from the certificate's bytes.
    const b64url = (bytes: ArrayBuffer) =>
      btoa(String.fromCharCode(...new Uint8Array(bytes)))
        .replace(/\+/g, "-")
        .replace(/\//g, "_")
        .replace(/=+$/, "");
    expect(key.x5t).toBe(b64url(await crypto.subtle.digest("SHA-1", der)));
    expect(key["x5t#S256"]).toBe(b64url(await crypto.subtle.digest("SHA-256", der)));
    // The certificate's public key is the JWK's; it is self-signed (its own key verifies it).
    const certificate = AsnConvert.parse(der, Certificate);
    const tbs = certificate.tbsCertificate;
    const rsa = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    const publicKey = await crypto.subtle.importKey(
      "spki",
      AsnConvert.serialize(tbs.subjectPublicKeyInfo),
      rsa,
      true,
      ["verify"],
    );
    const fromCertificate = (await crypto.subtle.exportKey("jwk", publicKey)) as JsonWebKey;
    expect({ n: fromCertificate.n, e: fromCertificate.e }).toEqual({ n: key.n, e: key.e });
    expect(
      await crypto.subtle.verify(rsa, publicKey, certificate.signatureValue, AsnConvert.serialize(tbs)),
    ).toBe(true);
    expect(AsnConvert.serialize(tbs.issuer)).toEqual(AsnConvert.serialize(tbs.subject));
    const notBefore = tbs.validity.notBefore.getTime().getTime();
    const notAfter = tbs.validity.notAfter.getTime().getTime();
    expect(notBefore).toBeLessThanOrEqual(Date.now());
    expect(notAfter - notBefore).toBe(2 * 365 * 86_400_000);

    // The same certificate as a PEM file to upload (Entra: Certificates & secrets → Upload certificate).
    const download = await call(`/api/institutions/${id}/sso/oidc/certificate`);
    expect(download.status).toBe(200);
    expect(download.headers.get("Content-Type")).toBe("application/x-pem-file");
    expect(download.headers.get("Content-Disposition")).toBe(`attachment; filename="lingua-sso-${id}.cer"`);
    const pem = await download.text();
    expect(pem).toMatch(
      /^-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/,
    );
    expect(pem.replace(/-----[A-Z ]+-----|\s/g, "")).toBe(key.x5c[0]);
    expect((await call(`/api/institutions/${id}/sso/oidc/certificate?kid=${key.kid}`)).status).toBe(200);
    const unknown = await callJson(`/api/institutions/${id}/sso/oidc/certificate?kid=nobody`);
    expect(unknown.res.status).toBe(404);
    const foreign = await createTenant();
    expect((await call(`/api/institutions/${foreign.institution.id}/sso/oidc/certificate`)).status).toBe(404);

    // The client assertion's header: the key by kid, the certificate by x5t (Entra) and x5t#S256.
    const connection = await database(env.DB)
      .select()
      .from(ssoConnections)
      .where(eq(ssoConnections.institutionId, id))
      .get();
    const oidc = connection?.oidc;
    if (!oidc?.client_id || !oidc.token_endpoint) throw new Error("no OIDC settings");
    const form = await clientAssertionForm(testContext(), id, {
      ...oidc,
      client_id: oidc.client_id,
      token_endpoint: oidc.token_endpoint,
    });
    expect(decodeProtectedHeader(form.client_assertion as string)).toEqual({
      alg: "RS256",
      kid: key.kid,
      typ: "JWT",
      x5t: key.x5t,
      "x5t#S256": key["x5t#S256"],
    });
  });

  it("a key made before certificates gets one on first use: the same key (kid), now certified", async () => {
    const tenant = await privateKeyJwtTenant();
    const [before] = (await linguaJwks(tenant)).keys;
    if (!before) throw new Error("no key");
    // As keys were stored before certificates: the JWK alone.
    const { x5c: _x5c, x5t: _x5t, "x5t#S256": _s256, ...bare } = before;
    await database(env.DB)
      .update(ssoSigningKeys)
      .set({ publicJwk: bare })
      .where(eq(ssoSigningKeys.id, before.kid as string));
    const [after] = (await linguaJwks(tenant)).keys;
    expect(after).toMatchObject({ kid: before.kid, n: before.n, e: before.e });
    expect(after?.x5c).toHaveLength(1);
    expect(after?.x5c).not.toEqual(before.x5c);
    // Written once: the stored key carries it, and the next answer is the same certificate.
    const stored = await database(env.DB)
      .select()
      .from(ssoSigningKeys)
      .where(eq(ssoSigningKeys.id, before.kid as string))
      .get();
    expect(stored?.publicJwk).toEqual(after);
    expect((await linguaJwks(tenant)).keys[0]).toEqual(after);
  });

  it("a key the provider does not know: the exchange fails and the sign-in is refused, with the reason in the log", async () => {
    const tenant = await privateKeyJwtTenant();
    await linguaJwks(tenant);
    const { publicKey } = await generateKeyPair("RS256", { extractable: true });
    const stranger = await exportJWK(publicKey);
    await publishAt(tenant.keysPath, {
      keys: [{ kty: "RSA", n: stranger.n, e: stranger.e, kid: "someone-else", alg: "RS256", use: "sig" }],
    });
    const who = await person(tenant);
    const { res } = await signInThroughProvider(tenant, who);
    expect(await refusal(res)).toMatchObject({
      code: "sso_sign_in_refused",
      reason: "token_exchange_failed",
    });
    const entry = await lastLogEntry(tenant);
    expect(entry).toMatchObject({ status: "refused", reason: "token_exchange_failed" });
    expect(entry.detail).toMatch(/invalid_client/);
  });

  it("rotation: a new current key, the previous one still published (7 days), sign-in with the new one", async () => {
    const tenant = await privateKeyJwtTenant();
    const before = await linguaJwks(tenant);
    const rotated = await callJson(`/api/institutions/${tenant.institution.id}/sso/oidc/keys/rotate`, {
      method: "POST",
      token: tenant.admin.token,
    });
    expect(rotated.res.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.retired_kid).toBe(before.keys[0]?.kid);
    expect(rotated.body.current_kid).not.toBe(before.keys[0]?.kid);
    const after = await linguaJwks(tenant);
    expect(after.keys.map((k) => k.kid)).toEqual([rotated.body.current_kid, rotated.body.retired_kid]);
    await publishAt(tenant.keysPath, after);
    const who = await person(tenant);
    const { res } = await signInThroughProvider(tenant, who);
    expect(res.status, await res.clone().text()).toBe(303);

    // Another institution's admin cannot rotate these keys.
    const other = await createTenant();
    const foreign = await callJson(`/api/institutions/${tenant.institution.id}/sso/oidc/keys/rotate`, {
      method: "POST",
      token: other.admin.token,
    });
    expect(foreign.res.status).toBe(404);
  });

  it("settings: private_key_jwt refused when the discovery document does not offer it; no JWKS without an OIDC connection", async () => {
    const tenant = await createTenant();
    // The scripted IdP's discovery document names no token_endpoint_auth_methods_supported: client_secret_basic only.
    const put = await putSso(tenant, {
      type: "oidc",
      state: "draft",
      oidc: {
        issuer: `${idp}/idp/${uniqueName("i")}`,
        client_id: "lingua",
        token_endpoint_auth_method: "private_key_jwt",
      },
    });
    expect(put.res.status).toBe(422);
    expect(put.body.errors).toEqual([
      expect.objectContaining({
        path: "oidc.token_endpoint_auth_method",
        message: expect.stringContaining('["client_secret_basic"]'),
      }),
    ]);
    const jwks = await callJson(`/api/institutions/${tenant.institution.id}/sso/oidc/jwks`);
    expect(jwks.res.status).toBe(404);
  });

  /** An issuer on the scripted IdP whose discovery document offers `private_key_jwt` with `algs`. */
  async function issuerSigningWith(algs: string[]) {
    const issuer = `${idp}/idp/${uniqueName("i")}`;
    await fetch(`${idp}/control`, {
      method: "PUT",
      body: JSON.stringify({
        path: `${new URL(issuer).pathname}/.well-known/openid-configuration`,
        body: JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          token_endpoint_auth_methods_supported: ["private_key_jwt"],
          token_endpoint_auth_signing_alg_values_supported: algs,
        }),
      }),
    });
    return issuer;
  }

  it("settings: ES256 keys for a provider that takes only ES256; refused when it takes neither RS256 nor ES256", async () => {
    const tenant = await createTenant();
    const es256 = await putSso(tenant, {
      type: "oidc",
      state: "draft",
      oidc: {
        issuer: await issuerSigningWith(["ES256", "PS256"]),
        client_id: "lingua",
        token_endpoint_auth_method: "private_key_jwt",
      },
    });
    expect(es256.res.status, JSON.stringify(es256.body)).toBe(200);
    const { keys } = await linguaJwks(tenant);
    expect(keys.find((k) => k.alg === "ES256")).toMatchObject({ kty: "EC", crv: "P-256", use: "sig" });
    expect(keys.find((k) => k.alg === "ES256")).not.toHaveProperty("d");

    const neither = await putSso(tenant, {
      type: "oidc",
      state: "draft",
      oidc: {
        issuer: await issuerSigningWith(["PS256"]),
        client_id: "lingua",
        token_endpoint_auth_method: "private_key_jwt",
      },
    });
    expect(neither.res.status).toBe(422);
    expect(neither.body.errors).toEqual([
      expect.objectContaining({
        path: "oidc.token_endpoint_auth_method",
        message: expect.stringContaining("RS256 or ES256"),
      }),
    ]);
  });
});
