import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, expect, it } from "vitest";
import { ltiConsumers, ltiKeys, ltiRegistrationLinks } from "../../src/db/schema";
import { sweepLti } from "../../src/domains/lti/launch/sweep";
import { database } from "../../src/platform/db";
import { advanceClock, resetClock } from "../../src/platform/service/clock";
import { BASE, callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createTenant, mintToken } from "../helpers/tenants";
import {
  LINKS,
  launchThroughPlatform,
  newLink,
  open,
  platformSimulator,
  type Registered,
  registrationOf,
} from "./support";

afterEach(() => resetClock());

const TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration";
const registrationsOf = (institutionId: string) =>
  database(env.DB).select().from(ltiConsumers).where(eq(ltiConsumers.institutionId, institutionId));

async function sha256Base64(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

it("a link registers the platform: its client id, deployment and URLs stored, keys made, the page closes, a launch works", async () => {
  const [tenant, stranger] = await Promise.all([createTenant(), createTenant()]);
  const link = await newLink(tenant.admin);
  // The secret names its institution (found where it lives), then 256 random bits.
  const named = new URL(link.url).searchParams.get("link") ?? "";
  expect(link.url.startsWith("https://api.lingua.test/api/lti/register?link=")).toBe(true);
  expect(named).toMatch(new RegExp(`^${tenant.institution.id}\\.[\\w-]{43}$`));
  expect(link.url).not.toContain(tenant.admin.token);
  const lifetime = Date.parse(link.expires_at) - Date.now();
  expect(lifetime).toBeGreaterThan(24 * 3_600_000 - 60_000);
  expect(lifetime).toBeLessThanOrEqual(24 * 3_600_000);
  // Only the secret's hash is kept.
  const secret = new URL(link.url).searchParams.get("link") ?? "";
  const stored = await database(env.DB)
    .select()
    .from(ltiRegistrationLinks)
    .where(eq(ltiRegistrationLinks.institutionId, tenant.institution.id));
  expect(stored).toHaveLength(1);
  expect(JSON.stringify(stored)).not.toContain(secret);

  const platform = platformSimulator();
  const registration = registrationOf(platform);
  const { openid_configuration } = await registration.script({ token: "registration-token-1" });
  const { res, text } = await open(link.url, {
    openid_configuration,
    registration_token: "registration-token-1",
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("Cache-Control")).toBe("no-store");

  // The LMS read its configuration and took the registration, both with the registration token.
  const after = await registration.state();
  expect(after.configuration_requests).toEqual([
    { authorization: "Bearer registration-token-1", accept: "application/json" },
  ]);
  expect(after.registration_requests).toHaveLength(1);
  const [request] = after.registration_requests;
  expect(request!.problems).toEqual([]);
  expect(request!.status).toBe(200);
  expect(request!.authorization).toBe("Bearer registration-token-1");
  expect(request!.content_type).toMatch(/^application\/json/);

  // Stored in the link's institution with what the platform gave and what its configuration says.
  const { res: listed, body: list } = await callJson("/api/integrations/lti-consumers", {
    token: tenant.admin.token,
  });
  expect(listed.status).toBe(200);
  expect(list.data).toHaveLength(1);
  const consumer = list.data[0];
  const urls = await platform.state();
  const doc = request!.body as Record<string, any>;
  expect(consumer).toMatchObject({
    institution_id: tenant.institution.id,
    name: `Moodle (${new URL(urls.issuer).host})`,
    issuer: urls.issuer,
    client_id: request!.client_id,
    deployment_ids: [expect.stringMatching(/^dep-/)],
    auth_login_url: urls.auth_login_url,
    auth_token_url: urls.auth_token_url,
    jwks_url: urls.jwks_url,
    auth_token_audience: null,
  });
  // The document the LMS took names the registration's own URLs, as a hand-made registration's tool URLs.
  expect(doc).toMatchObject({
    application_type: "web",
    response_types: ["id_token"],
    grant_types: ["implicit", "client_credentials"],
    initiate_login_uri: consumer.tool.login_url,
    redirect_uris: consumer.tool.redirect_uris,
    jwks_uri: consumer.tool.jwks_url,
    token_endpoint_auth_method: "private_key_jwt",
    client_name: "Lingua",
  });
  expect(doc.scope.split(" ").sort()).toEqual([
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
  ]);
  expect(doc[TOOL_CONFIGURATION]).toMatchObject({
    domain: "api.lingua.test",
    target_link_uri: consumer.tool.launch_url,
    claims: expect.arrayContaining(["iss", "sub", "name", "email"]),
    messages: [
      { type: "LtiResourceLinkRequest", target_link_uri: consumer.tool.launch_url },
      { type: "LtiDeepLinkingRequest", target_link_uri: consumer.tool.launch_url },
    ],
  });

  // Its key exists before anyone read the JWKS, and the JWKS serves it.
  const keys = await database(env.DB).select().from(ltiKeys).where(eq(ltiKeys.consumerId, consumer.id));
  expect(keys).toHaveLength(1);
  const jwks = await callJson(consumer.tool.jwks_url);
  expect(jwks.res.status).toBe(200);
  expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual([keys[0]!.id]);

  // The page tells the opener or parent to close it, by the one script its CSP allows by hash; only
  // the platform may frame it.
  expect(text).toContain("Lingua is registered with");
  expect(text).toContain(consumer.id);
  const script = /<script>([\s\S]*?)<\/script>/.exec(text)?.[1] ?? "";
  expect(script).toContain(
    '(window.opener || window.parent).postMessage({ subject: "org.imsglobal.lti.close" }, "*")',
  );
  const csp = res.headers.get("Content-Security-Policy") ?? "";
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain(`script-src 'sha256-${await sha256Base64(script)}'`);
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).toContain(`frame-ancestors ${new URL(urls.issuer).origin}`);
  expect(res.headers.get("X-Frame-Options")).toBeNull();

  // A launch through the registration works at once: the LMS was configured by the registration.
  const reg: Registered = {
    platform,
    consumer,
    clientId: consumer.client_id,
    deploymentId: consumer.deployment_ids[0],
    urls,
  };
  const launched = await launchThroughPlatform(reg);
  expect(launched.authorized?.status).toBe(200);
  expect(launched.res?.status).toBe(200);
  expect(launched.body.launch).toMatchObject({ status: "succeeded", consumer_id: consumer.id });

  // Another institution's admin sees nothing of it.
  const foreign = await callJson(`/api/integrations/lti-consumers/${consumer.id}`, {
    token: stranger.admin.token,
  });
  expect(foreign.res.status).toBe(404);
  const theirs = await callJson("/api/integrations/lti-consumers", { token: stranger.admin.token });
  expect(theirs.body.data).toEqual([]);

  // The link is spent: opened again, an error page, and nothing more stored or sent.
  const again = await open(link.url, { openid_configuration, registration_token: "registration-token-1" });
  expect(again.res.status).toBe(410);
  expect(again.res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  expect(again.text).toContain("lti_registration_link_used");
  expect(again.text).toContain("has been used already");
  expect(await registrationsOf(tenant.institution.id)).toHaveLength(1);
  expect((await registration.state()).registration_requests).toHaveLength(1);
});

it("an expired link is refused with a page; nothing is fetched or stored", async () => {
  const tenant = await createTenant();
  const link = await newLink(tenant.admin);
  const platform = platformSimulator();
  const registration = registrationOf(platform);
  const { openid_configuration } = await registration.script({});
  advanceClock(24 * 3_600_000 + 1_000);
  const { res, text } = await open(link.url, { openid_configuration });
  expect(res.status).toBe(410);
  expect(text).toContain("lti_registration_link_expired");
  expect(text).toContain("Nothing was stored");
  const state = await registration.state();
  expect(state.configuration_requests).toEqual([]);
  expect(state.registration_requests).toEqual([]);
  expect(await registrationsOf(tenant.institution.id)).toEqual([]);
});

it("the minute sweep deletes a link 30 days after it expired, not before", async () => {
  const tenant = await createTenant();
  await newLink(tenant.admin);
  const stored = () =>
    database(env.DB)
      .select({ id: ltiRegistrationLinks.id })
      .from(ltiRegistrationLinks)
      .where(eq(ltiRegistrationLinks.institutionId, tenant.institution.id))
      .all();
  expect(await stored()).toHaveLength(1);
  advanceClock(24 * 3_600_000 + 29 * 86_400_000);
  await sweepLti(testContext());
  expect(await stored()).toHaveLength(1);
  advanceClock(2 * 86_400_000);
  await sweepLti(testContext());
  expect(await stored()).toHaveLength(0);
});

it("a configuration whose issuer does not prefix its URL is refused before anything is registered; the link stays usable", async () => {
  const tenant = await createTenant();
  const link = await newLink(tenant.admin);
  const platform = platformSimulator();
  const registration = registrationOf(platform);
  const { openid_configuration } = await registration.script({
    configuration: { issuer: "https://canvas.instructure.com" },
  });
  const refused = await open(link.url, { openid_configuration });
  expect(refused.res.status).toBe(502);
  expect(refused.text).toContain("lti_platform_configuration_invalid");
  expect(refused.text).toContain("is not a prefix of the configuration URL");
  // A prefix that does not end on a path boundary is none either.
  const base = new URL(openid_configuration);
  await registration.script({ configuration: { issuer: `${base.origin}/p/${platform.name.slice(0, 8)}` } });
  const lookAlike = await open(link.url, { openid_configuration });
  expect(lookAlike.res.status).toBe(502);
  expect((await registration.state()).registration_requests).toEqual([]);
  expect(await registrationsOf(tenant.institution.id)).toEqual([]);

  // Fixed, the same link registers.
  await registration.script({ configuration: {} });
  const fixed = await open(link.url, { openid_configuration });
  expect(fixed.res.status).toBe(200);
  expect(await registrationsOf(tenant.institution.id)).toHaveLength(1);
});

it("a configuration lacking what an LTI platform must say, or unreadable, names the problem and stores nothing", async () => {
  const tenant = await createTenant();
  const link = await newLink(tenant.admin);
  const platform = platformSimulator();
  const registration = registrationOf(platform);
  const { openid_configuration } = await registration.script({
    configuration: {
      token_endpoint: null,
      token_endpoint_auth_methods_supported: ["client_secret_basic"],
      subject_types_supported: "public",
      "https://purl.imsglobal.org/spec/lti-platform-configuration": { version: "1" },
    },
  });
  const { res, text } = await open(link.url, { openid_configuration });
  expect(res.status).toBe(502);
  expect(text).toContain("token_endpoint: is required");
  expect(text).toContain("subject_types_supported: Invalid input: expected array, received string");
  expect(text).toContain("token_endpoint_auth_methods_supported: must include &quot;private_key_jwt&quot;");
  expect(text).toContain("https://purl.imsglobal.org/spec/lti-platform-configuration.product_family_code");

  // The registration token the platform expects is not the one sent: its 401 is reported.
  await registration.script({ configuration: {}, token: "expected" });
  const unauthorised = await open(link.url, { openid_configuration, registration_token: "other" });
  expect(unauthorised.res.status).toBe(502);
  expect(unauthorised.text).toContain("HTTP 401");
  // A URL the outbound gate refuses (metadata address) is refused too.
  await registration.script({
    configuration: { jwks_uri: "http://169.254.169.254/latest/meta-data" },
    token: null,
  });
  const gated = await open(link.url, { openid_configuration });
  expect(gated.res.status).toBe(502);
  expect(gated.text).toContain("jwks_url");
  expect((await registration.state()).registration_requests).toEqual([]);
  expect(await registrationsOf(tenant.institution.id)).toEqual([]);
});

it("a registration endpoint's 4xx is an error page with its answer, escaped; nothing is stored", async () => {
  const tenant = await createTenant();
  const link = await newLink(tenant.admin);
  const platform = platformSimulator();
  const registration = registrationOf(platform);
  const { openid_configuration } = await registration.script({
    answers: [
      {
        status: 400,
        body: JSON.stringify({
          error: "invalid_client_metadata",
          error_description: "<script>alert(1)</script>",
        }),
      },
    ],
  });
  const { res, text } = await open(link.url, { openid_configuration });
  expect(res.status).toBe(502);
  expect(text).toContain("lti_registration_rejected");
  expect(text).toContain("HTTP 400");
  expect(text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  expect(text).not.toContain("<script>alert");
  expect(res.headers.get("Content-Security-Policy")).not.toContain("script-src");
  expect(await registrationsOf(tenant.institution.id)).toEqual([]);
  // An answer without a client id is no registration either.
  await registration.script({ answers: [{ status: 200, body: JSON.stringify({ client_name: "x" }) }] });
  const noClient = await open(link.url, { openid_configuration });
  expect(noClient.res.status).toBe(502);
  expect(noClient.text).toContain("client_id");
  expect(await registrationsOf(tenant.institution.id)).toEqual([]);
});

it("two openings of one link at once register once; the other is told it is under way", async () => {
  const tenant = await createTenant();
  const link = await newLink(tenant.admin);
  const platform = platformSimulator();
  const registration = registrationOf(platform);
  const { openid_configuration } = await registration.script({ answers: [{ delay_ms: 300 }] });
  const [a, b] = await Promise.all([
    open(link.url, { openid_configuration }),
    open(link.url, { openid_configuration }),
  ]);
  expect([a.res.status, b.res.status].sort()).toEqual([200, 409]);
  expect([a.text, b.text].join()).toContain("lti_registration_in_progress");
  expect(await registrationsOf(tenant.institution.id)).toHaveLength(1);
  expect((await registration.state()).registration_requests).toHaveLength(1);
});

it("a platform that makes no deployment: the registration is stored without one and the page says what to add", async () => {
  const tenant = await createTenant();
  const link = await newLink(tenant.admin);
  const platform = platformSimulator();
  const registration = registrationOf(platform);
  const { openid_configuration } = await registration.script({ deployment_id: null });
  const { res, text } = await open(link.url, { openid_configuration });
  expect(res.status).toBe(200);
  const [row] = await registrationsOf(tenant.institution.id);
  expect(row?.deploymentIds).toEqual([]);
  expect(text).toContain("none yet");
  expect(text).toContain(`PUT /api/integrations/lti-consumers/${row?.id}`);
});

it("unknown links and missing parameters are error pages; the link route is idempotent and needs lti:write", async () => {
  const tenant = await createTenant();
  const platform = platformSimulator();
  const { openid_configuration } = await registrationOf(platform).script({});
  const unknown = await open(`${BASE}/api/lti/register?link=not-a-link`, { openid_configuration });
  expect(unknown.res.status).toBe(404);
  expect(unknown.text).toContain("lti_registration_link_unknown");
  // Framed by the platform only: the configuration URL's origin, and its parent domain's hosts (a
  // hosted Canvas' pages are on <school>.instructure.com).
  const canvas = await open(`${BASE}/api/lti/register?link=not-a-link`, {
    openid_configuration: "https://canvas.instructure.com/api/lti/security/openid-configuration",
  });
  expect(canvas.res.headers.get("Content-Security-Policy")).toContain(
    "frame-ancestors https://canvas.instructure.com https://*.instructure.com",
  );
  const missing = await open(`${BASE}/api/lti/register`, {});
  expect(missing.res.status).toBe(422);
  expect(missing.text).toContain("openid_configuration");
  expect(missing.res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");

  const key = crypto.randomUUID();
  const first = await newLink(tenant.admin, { "Idempotency-Key": key });
  const replay = await newLink(tenant.admin, { "Idempotency-Key": key });
  expect(replay.url).toBe(first.url);
  const reader = await mintToken(tenant.admin, ["lti:read"]);
  const denied = await callJson(LINKS, { token: reader.token, method: "POST" });
  expect(denied.res.status).toBe(403);
  expect(JSON.stringify(denied.body)).toContain("lti:write");
});
