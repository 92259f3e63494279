import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { ltiStates, ltiUserLinks } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { BASE, call, callJson } from "../helpers/api";
import { createTenant, freshIp } from "../helpers/tenants";
import {
  CALLBACK_URL,
  launchClaims,
  login,
  postCallback,
  type Registered,
  registerPlatform,
} from "./support";

/**
 * Launches without third-party cookies (1EdTech LTI Client Side postMessage) and the browser binding
 * of every launch (login CSRF): the server side. The pages' script runs in a real browser in
 * test/e2e/lti-storage.test.ts.
 */

const SAME_ORIGIN = { Origin: BASE, "Sec-Fetch-Site": "same-origin" };

/** The `data-` attributes of the storage page's element (HTML-unescaped). */
function dataOf(page: string): Record<string, string> {
  const tag = /<(?:div|form) id="lti-storage"([^>]*)>/.exec(page)?.[1] ?? "";
  const unescapeHtml = (v: string) =>
    v
      .replaceAll("&quot;", '"')
      .replaceAll("&#39;", "'")
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">")
      .replaceAll("&amp;", "&");
  return Object.fromEntries(
    [...tag.matchAll(/data-([\w-]+)="([^"]*)"/g)].map((m) => [m[1]!, unescapeHtml(m[2]!)]),
  );
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

/** A browser's login through the registration's own URL, offering the platform's storage. */
async function storageLogin(reg: Registered, params: Record<string, string> = {}, headers = {}) {
  const query = new URLSearchParams({
    iss: reg.urls.issuer,
    login_hint: "hint-42",
    target_link_uri: reg.consumer.tool.launch_url,
    client_id: reg.clientId,
    lti_storage_target: "_parent",
    ...params,
  });
  const res = await call(`${reg.consumer.tool.login_url}?${query}`, {
    headers: { "CF-Connecting-IP": freshIp(), Accept: "text/html", ...headers },
  });
  const page = await res.text();
  const data = dataOf(page);
  return { res, page, data, state: data.state ?? "", nonce: data.nonce ?? "" };
}

it("a login with lti_storage_target answers the storage page: the state and nonce to put, the platform's origin, a hashed script, framed by the platform only", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { res, page, data, state, nonce } = await storageLogin(
    reg,
    {},
    { Origin: "https://school.lms.example" },
  );
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  // The cookie stays, for browsers that send it back.
  expect(res.headers.get("Set-Cookie")).toMatch(new RegExp(`^lti_state_${state}=[\\w-]+;.*Partitioned`));

  const platformOrigin = new URL(reg.urls.auth_login_url).origin;
  expect(data).toMatchObject({
    step: "login",
    target: "_parent",
    origin: platformOrigin,
    "state-key": `lti_state_${state}`,
    "nonce-key": `lti_nonce_${nonce}`,
  });
  expect(state.length).toBeGreaterThan(40);
  const next = new URL(data.next!);
  expect(`${next.origin}${next.pathname}`).toBe(reg.urls.auth_login_url);
  expect(next.searchParams.get("state")).toBe(state);
  expect(next.searchParams.get("nonce")).toBe(nonce);
  expect(next.searchParams.get("redirect_uri")).toBe(reg.consumer.tool.redirect_uris[0]);

  const csp = res.headers.get("Content-Security-Policy")!;
  const script = /<script>([\s\S]*?)<\/script>/.exec(page)![1]!;
  expect(csp).toContain(`script-src 'sha256-${await sha256(script)}'`);
  expect(csp).toMatch(/^default-src 'none';/);
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).toContain("form-action 'none'");
  const ancestors = /frame-ancestors ([^;]+)/.exec(csp)![1]!.split(" ");
  expect(ancestors).toContain(platformOrigin);
  expect(ancestors).toContain("https://school.lms.example");
  expect(ancestors).not.toContain("*");
  expect(res.headers.get("X-Frame-Options")).toBeNull();
  expect(page.match(/<script/g)).toHaveLength(1);

  const row = await database(env.DB).select().from(ltiStates).where(eq(ltiStates.state, state)).get();
  expect(row).toMatchObject({
    nonce,
    storageTarget: "_parent",
    loginOrigin: "https://school.lms.example",
    usedAt: null,
  });
});

it("the storage page escapes what the login sent, and a JSON client still gets the redirect URL", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const hostile = `x"><script>alert(1)</script>`;
  const { res, page, data } = await storageLogin(reg, { lti_storage_target: hostile });
  expect(res.status).toBe(200);
  expect(page).not.toContain("<script>alert(1)");
  expect(page.match(/<script/g)).toHaveLength(1);
  expect(data.target).toBe(hostile);

  const asJson = await callJson(
    `${reg.consumer.tool.login_url}?${new URLSearchParams({ iss: reg.urls.issuer, login_hint: "h", target_link_uri: reg.consumer.tool.launch_url, lti_storage_target: "_parent" })}`,
    { headers: { Accept: "application/json" } },
  );
  expect(asJson.res.status).toBe(200);
  expect(asJson.body.redirect_url).toContain(reg.urls.auth_login_url);
  expect(asJson.res.headers.get("Set-Cookie")).toMatch(/^lti_state_/);
});

it("the platform's post without the cookie, after a storage login, answers the page that reads the values back; the state is not spent", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { state, nonce } = await storageLogin(reg);
  const idToken = await reg.platform.idToken(
    launchClaims(reg, nonce, {
      "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": reg.consumer.tool.launch_url,
    }),
  );
  const url = reg.consumer.tool.redirect_uris[0];
  const res = await postCallback({ id_token: idToken, state }, { cookie: false, json: false, url });
  expect(res.status).toBe(200);
  const page = await res.text();
  const data = dataOf(page);
  expect(data).toMatchObject({
    step: "callback",
    target: "_parent",
    origin: new URL(reg.urls.auth_login_url).origin,
    "state-key": `lti_state_${state}`,
    "nonce-key": `lti_nonce_${nonce}`,
  });
  expect(page).toContain(`action="/api/lti/callback/${reg.consumer.id}"`);
  expect(page).toContain(`name="id_token" value="${idToken}"`);
  expect(page).toContain('<meta name="referrer" content="same-origin">');
  const csp = res.headers.get("Content-Security-Policy")!;
  const script = /<script>([\s\S]*?)<\/script>/.exec(page)![1]!;
  expect(csp).toContain(`script-src 'sha256-${await sha256(script)}'`);
  expect(csp).toContain("form-action 'self'");
  expect(csp).not.toMatch(/frame-ancestors[^;]*\*(?!\.)/);
  const row = await database(env.DB).select().from(ltiStates).where(eq(ltiStates.state, state)).get();
  expect(row?.usedAt).toBeNull();
});

it("with the storage proof posted from Lingua's own page, the launch completes without a cookie", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { state, nonce } = await storageLogin(reg);
  const sub = `user-${crypto.randomUUID()}`;
  const idToken = await reg.platform.idToken(
    launchClaims(reg, nonce, {
      sub,
      "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": reg.consumer.tool.launch_url,
    }),
  );
  const url = reg.consumer.tool.redirect_uris[0];
  const form = { id_token: idToken, state, platform_storage_state: state, platform_storage_nonce: nonce };
  const res = await postCallback(form, { cookie: false, json: false, url, headers: SAME_ORIGIN });
  expect(res.status).toBe(303);
  const code = new URLSearchParams(new URL(res.headers.get("Location")!).hash.slice(1)).get("code")!;
  const exchanged = await callJson("/api/lti/session", { body: { code } });
  expect(exchanged.res.status).toBe(200);
  expect(exchanged.body.launch.status).toBe("succeeded");
  expect(await database(env.DB).$count(ltiUserLinks, eq(ltiUserLinks.sub, sub))).toBe(1);

  // The same post again (a replayed proof): the state is spent.
  const replayed = await postCallback(form, { cookie: false, url, headers: SAME_ORIGIN });
  expect(replayed.status).toBe(400);
  expect(((await replayed.json()) as any).reason).toBe("state_used");
});

it("a callback with neither the cookie nor the storage check is refused with a page and a launch-log entry, and provisions nothing", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  // A login without storage; the platform's genuine post carried to another browser (login CSRF).
  const started = await login(reg, {}, undefined, reg.consumer.tool.login_url);
  const sub = `user-${crypto.randomUUID()}`;
  const idToken = await reg.platform.idToken(
    launchClaims(reg, started.nonce, {
      sub,
      "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": reg.consumer.tool.launch_url,
    }),
  );
  const url = reg.consumer.tool.redirect_uris[0];
  const res = await postCallback(
    { id_token: idToken, state: started.state },
    { cookie: false, json: false, url },
  );
  expect(res.status).toBe(400);
  expect(res.headers.get("Content-Type")).toContain("text/html");
  const page = await res.text();
  expect(page).toContain("browser_binding_missing");
  expect(page).toContain("new window");
  expect(await database(env.DB).$count(ltiUserLinks, eq(ltiUserLinks.sub, sub))).toBe(0);
  const log = await callJson("/api/integrations/lti-launches?status=failed", { token: tenant.admin.token });
  expect(log.body.data[0]).toMatchObject({
    status: "failed",
    failure_reason: "browser_binding_missing",
    consumer_id: reg.consumer.id,
    user_id: null,
  });
  // The state is spent: the same post with the cookie afterwards is refused too.
  const again = await postCallback({ id_token: idToken, state: started.state }, { url });
  expect(((await again.json()) as any).reason).toBe("state_used");
});

it("a JSON client without the cookie is refused too, even after a storage login (it cannot run the page)", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const { state, nonce } = await storageLogin(reg);
  const idToken = await reg.platform.idToken(
    launchClaims(reg, nonce, {
      "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": reg.consumer.tool.launch_url,
    }),
  );
  const res = await postCallback(
    { id_token: idToken, state },
    { cookie: false, url: reg.consumer.tool.redirect_uris[0] },
  );
  expect(res.status).toBe(400);
  expect((await res.json()) as any).toMatchObject({
    code: "lti_launch_refused",
    reason: "browser_binding_missing",
  });
});

it("a forged storage check is refused: wrong values, a failed read, another site's post, a login without storage", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const url = reg.consumer.tool.redirect_uris[0];
  const claims = (nonce: string) =>
    launchClaims(reg, nonce, {
      "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": reg.consumer.tool.launch_url,
    });
  const cases: [
    string,
    (s: { state: string; nonce: string }) => Record<string, string>,
    Record<string, string>,
  ][] = [
    [
      "platform_storage_mismatch",
      (s) => ({ platform_storage_state: s.state, platform_storage_nonce: "other" }),
      SAME_ORIGIN,
    ],
    [
      "platform_storage_mismatch",
      (s) => ({ platform_storage_state: "other", platform_storage_nonce: s.nonce }),
      SAME_ORIGIN,
    ],
    ["platform_storage_failed", () => ({ platform_storage_error: "timeout" }), SAME_ORIGIN],
    ["platform_storage_failed", (s) => ({ platform_storage_state: s.state }), SAME_ORIGIN],
    // The right values, but posted by another site's page (an attacker who knows their own login's).
    [
      "browser_binding_missing",
      (s) => ({ platform_storage_state: s.state, platform_storage_nonce: s.nonce }),
      { Origin: "https://attacker.example", "Sec-Fetch-Site": "cross-site" },
    ],
    [
      "browser_binding_missing",
      (s) => ({ platform_storage_state: s.state, platform_storage_nonce: s.nonce }),
      { Origin: BASE, "Sec-Fetch-Site": "cross-site" },
    ],
    [
      "browser_binding_missing",
      (s) => ({ platform_storage_state: s.state, platform_storage_nonce: s.nonce }),
      {},
    ],
  ];
  for (const [reason, proof, headers] of cases) {
    const { state, nonce } = await storageLogin(reg);
    const idToken = await reg.platform.idToken(claims(nonce));
    const res = await postCallback(
      { id_token: idToken, state, ...proof({ state, nonce }) },
      { cookie: false, url, headers },
    );
    const body = (await res.json()) as any;
    expect(res.status, `${reason}: ${JSON.stringify(body)}`).toBe(400);
    expect(body.reason).toBe(reason);
  }
  // A storage check for a login that offered no storage.
  const plain = await login(reg, {}, undefined, reg.consumer.tool.login_url);
  const res = await postCallback(
    {
      id_token: await reg.platform.idToken(claims(plain.nonce)),
      state: plain.state,
      platform_storage_state: plain.state,
      platform_storage_nonce: plain.nonce,
    },
    { cookie: false, url, headers: SAME_ORIGIN },
  );
  expect(((await res.json()) as any).reason).toBe("platform_storage_mismatch");
});

it("with the cookie, a storage login completes at once (browsers that allow it), through the shared URLs too", async () => {
  const tenant = await createTenant();
  const reg = await registerPlatform(tenant.admin);
  const query = new URLSearchParams({
    iss: reg.urls.issuer,
    login_hint: "h",
    target_link_uri: CALLBACK_URL,
    client_id: reg.clientId,
    lti_storage_target: "post_message_forwarding",
  });
  const res = await call(`/api/lti/login?${query}`, { headers: { "CF-Connecting-IP": freshIp() } });
  expect(res.status).toBe(200);
  const { state, nonce, target } = dataOf(await res.text());
  expect(target).toBe("post_message_forwarding");
  const cookie = res.headers.get("Set-Cookie")!.split(";")[0]!;
  const idToken = await reg.platform.idToken(launchClaims(reg, nonce!));
  const launched = await postCallback({ id_token: idToken, state: state! }, { cookie, json: false });
  expect(launched.status).toBe(303);
});

it("the storage pages of a hosted Canvas may be framed by its hosts: the issuer's and authorization endpoint's, their parent domains' hosts, and the page that sent the login", async () => {
  const tenant = await createTenant();
  const clientId = `1000000${Math.floor(Math.random() * 1e9)}`;
  const { res: created, body: consumer } = await callJson("/api/integrations/lti-consumers", {
    token: tenant.admin.token,
    body: {
      name: "Canvas",
      issuer: "https://canvas.instructure.com",
      client_id: clientId,
      deployment_ids: ["1:abc"],
      auth_login_url: "https://sso.canvaslms.com/api/lti/authorize_redirect",
      auth_token_url: "https://sso.canvaslms.com/login/oauth2/token",
      jwks_url: "https://sso.canvaslms.com/api/lti/security/jwks",
    },
  });
  expect(created.status).toBe(201);
  const query = new URLSearchParams({
    iss: "https://canvas.instructure.com",
    login_hint: "h",
    target_link_uri: consumer.tool.launch_url,
    client_id: clientId,
    lti_storage_target: "post_message_forwarding",
  });
  const res = await call(`${consumer.tool.login_url}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "CF-Connecting-IP": freshIp(),
      Origin: "https://canvas.school.edu",
    },
    rawBody: query.toString(),
  });
  expect(res.status).toBe(200);
  const csp = res.headers.get("Content-Security-Policy")!;
  expect(/frame-ancestors ([^;]+)/.exec(csp)![1]!.split(" ").sort()).toEqual(
    [
      "https://*.canvaslms.com",
      "https://*.instructure.com",
      "https://canvas.instructure.com",
      "https://canvas.school.edu",
      "https://sso.canvaslms.com",
    ].sort(),
  );
  expect(dataOf(await res.text())).toMatchObject({
    target: "post_message_forwarding",
    origin: "https://sso.canvaslms.com",
  });
});
