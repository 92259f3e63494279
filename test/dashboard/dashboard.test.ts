import { env } from "cloudflare:test";
import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ACCEPT_INVITATION_PATH } from "../../src/dashboard/prefixes";
import { apiTokens } from "../../src/db/schema";
import { INVITATION_PATH } from "../../src/domains/members/invitations";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { createPlatformAdmin, createTenant, type Tenant } from "../helpers/tenants";
import { Browser, csrfOf, scriptTags, setCookies, textOf } from "./support";

const TOKENS = "/dashboard/settings/integrations/tokens";

/** Every page behind the sign-in, by GET. */
const WEBHOOKS = "/dashboard/settings/integrations/webhooks";
const EXPORTS = "/dashboard/settings/integrations/exports";
/** The pages of the members, LTI and xAPI sections (for admins; staff choose an institution first). */
const SECTION_PAGES = [
  "/dashboard/members",
  "/dashboard/members/new",
  "/dashboard/members/bulk",
  "/dashboard/settings/integrations/lti",
  "/dashboard/settings/integrations/lti/new",
  "/dashboard/settings/integrations/lti/launches",
  "/dashboard/settings/integrations/xapi",
  "/dashboard/settings/integrations/xapi/new",
];
const ANALYTICS = "/dashboard/analytics";
const BILLING = "/dashboard/settings/billing";
const SETTINGS = "/dashboard/settings/institution";
const PAGES = [
  ...SECTION_PAGES,
  "/dashboard",
  TOKENS,
  `${TOKENS}/new`,
  WEBHOOKS,
  `${WEBHOOKS}/new`,
  EXPORTS,
  "/dashboard/institutions",
  ANALYTICS,
  `${ANALYTICS}?view=print`,
  BILLING,
  SETTINGS,
  `${SETTINGS}/sso`,
];

async function signedInAdmin(tenant?: Tenant) {
  const t = tenant ?? (await createTenant());
  const browser = new Browser();
  const res = await browser.signIn(t.admin.email);
  expect(res.status, await res.clone().text()).toBe(303);
  return { tenant: t, browser };
}

async function liveSessions(userId: string) {
  return database(env.DB)
    .select({ id: apiTokens.id })
    .from(apiTokens)
    .where(and(eq(apiTokens.userId, userId), eq(apiTokens.kind, "session"), isNull(apiTokens.revokedAt)))
    .all();
}

async function apiTokenCount(tenant: Tenant) {
  const { body } = await callJson("/api/integrations/tokens?kind=api", { token: tenant.admin.token });
  return body.meta.total as number;
}

/** Creates a token through the page's form; answers the page and the plain value it shows. */
async function createThroughPage(browser: Browser, fields: Record<string, string | string[]>) {
  const csrf = await browser.csrfFor(`${TOKENS}/new`);
  const res = await browser.post(TOKENS, { _csrf: csrf, ...fields });
  const html = await res.text();
  const plain = /id="new-token"[^>]*value="(lng_[^"]+)"/.exec(html)?.[1];
  return { res, html, plain };
}

describe("dashboard: sign-in and the session cookie", () => {
  it("signs an admin in with a __Host- cookie: HttpOnly, Secure, SameSite=Lax, Path=/, no Domain", async () => {
    const tenant = await createTenant();
    const browser = new Browser();
    const page = await browser.get("/dashboard/sign-in");
    expect(page.status).toBe(200);
    const loginCsrf = setCookies(page).find((c) => c.startsWith("__Host-lingua_csrf="));
    expect(loginCsrf).toMatch(/; Path=\/; .*HttpOnly; Secure; SameSite=Lax/i);
    const res = await browser.post("/dashboard/sign-in", {
      _csrf: csrfOf(await page.text()),
      email: tenant.admin.email,
      password: "correct horse battery staple",
      next: "/dashboard/settings/integrations/tokens",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/dashboard/settings/integrations/tokens");
    const cookie = setCookies(res).find((c) => c.startsWith("__Host-lingua_session="))!;
    expect(cookie).toBeDefined();
    const attributes = cookie
      .split(/;\s*/)
      .slice(1)
      .map((a) => a.split("=")[0]!.toLowerCase());
    expect(attributes.sort()).toEqual(["httponly", "max-age", "path", "samesite", "secure"]);
    expect(cookie).toMatch(/; Path=\/(;|$)/);
    expect(cookie).toMatch(/SameSite=Lax/);
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)![1]);
    expect(maxAge).toBeGreaterThan(29 * 86_400);
    expect(maxAge).toBeLessThanOrEqual(30 * 86_400);

    // The cookie holds a session token of the API's kind: the same session works as a bearer token.
    const me = await callJson("/api/auth/me", { token: browser.session! });
    expect(me.res.status).toBe(200);
    expect(me.body.token.kind).toBe("session");
    expect(me.body.user.id).toBe(tenant.admin.id);

    const overview = await browser.get("/dashboard");
    expect(overview.status).toBe(200);
    expect(textOf(await overview.text())).toContain(tenant.admin.email);
  });

  it("answers a wrong password with the API's message and no session; an open redirect is refused", async () => {
    const tenant = await createTenant();
    const browser = new Browser();
    const wrong = await browser.signIn(tenant.admin.email, "not the password");
    expect(wrong.status).toBe(401);
    expect(textOf(await wrong.text())).toContain("The e-mail address or the password is wrong.");
    expect(browser.session).toBeUndefined();

    const csrf = await browser.csrfFor("/dashboard/sign-in");
    const res = await browser.post("/dashboard/sign-in", {
      _csrf: csrf,
      email: tenant.admin.email,
      password: "correct horse battery staple",
      next: "//evil.example/dashboard",
    });
    expect(res.headers.get("Location")).toBe("/dashboard");
  });

  it("counts failed sign-ins as the API does: the e-mail is blocked for this address after 10", async () => {
    const tenant = await createTenant();
    const browser = new Browser();
    for (let i = 0; i < 10; i++) expect((await browser.signIn(tenant.admin.email, "wrong")).status).toBe(401);
    const blocked = await browser.signIn(tenant.admin.email);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(blocked.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(browser.session).toBeUndefined();
  });

  it("refuses a sign-in form without its CSRF value, or from another origin, and signs nobody in", async () => {
    const tenant = await createTenant();
    const browser = new Browser();
    const csrf = await browser.csrfFor("/dashboard/sign-in");
    const fields = { email: tenant.admin.email, password: "correct horse battery staple" };
    const missing = await browser.post("/dashboard/sign-in", fields);
    expect(missing.status).toBe(403);
    const forged = await browser.post("/dashboard/sign-in", { ...fields, _csrf: "x".repeat(43) });
    expect(forged.status).toBe(403);
    const elsewhere = await browser.post(
      "/dashboard/sign-in",
      { ...fields, _csrf: csrf },
      { Origin: "https://evil.example" },
    );
    expect(elsewhere.status).toBe(403);
    expect(textOf(await elsewhere.text())).toContain("Nothing was changed");
    expect(browser.session).toBeUndefined();
    expect(await liveSessions(tenant.admin.id)).toHaveLength(1); // the helper's own API session
  });

  it("signs out: the session token is revoked for the API too, and the old cookie gets no page", async () => {
    const { browser } = await signedInAdmin();
    const session = browser.session!;
    const csrf = await browser.csrfFor();
    const res = await browser.post("/dashboard/sign-out", { _csrf: csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/dashboard/sign-in?signed_out=1");
    expect(setCookies(res).some((c) => /^__Host-lingua_session=;.*Max-Age=0/i.test(c))).toBe(true);
    expect((await call("/api/auth/me", { token: session })).status).toBe(401);

    const stale = new Browser();
    stale.cookies.set("__Host-lingua_session", session);
    const again = await stale.get(TOKENS);
    expect(again.status).toBe(303);
    expect(again.headers.get("Location")).toBe(`/dashboard/sign-in?next=${encodeURIComponent(TOKENS)}`);
  });

  it("signs the browser out when the session is revoked through the API", async () => {
    const { browser } = await signedInAdmin();
    const me = await callJson("/api/auth/me", { token: browser.session! });
    const revoked = await call(`/api/integrations/tokens/${me.body.token.id}`, {
      method: "DELETE",
      token: browser.session!,
    });
    expect(revoked.status).toBe(204);
    expect((await browser.get("/dashboard")).status).toBe(303);
  });

  it("refuses sign-out without the session's CSRF token: the session keeps working", async () => {
    const { browser } = await signedInAdmin();
    const res = await browser.post("/dashboard/sign-out", { _csrf: "forged" });
    expect(res.status).toBe(403);
    expect((await call("/api/auth/me", { token: browser.session! })).status).toBe(200);
  });

  it("sends a browser without a session to the sign-in page, remembering where it was going", async () => {
    const browser = new Browser();
    for (const path of PAGES) {
      const res = await browser.get(path);
      expect([path, res.status]).toEqual([path, 303]);
      expect(res.headers.get("Location")).toBe(`/dashboard/sign-in?next=${encodeURIComponent(path)}`);
    }
    // An API token in the cookie is not a browser session.
    const tenant = await createTenant();
    const { body } = await callJson("/api/integrations/tokens", {
      token: tenant.admin.token,
      body: { name: "api", abilities: ["*"] },
    });
    browser.cookies.set("__Host-lingua_session", body.token);
    expect((await browser.get("/dashboard")).status).toBe(303);
  });
});

describe("dashboard: who may use it", () => {
  for (const role of ["learner", "instructor"] as const) {
    it(`gives a ${role} no page: refused at sign-in (the session revoked at once) and with a session of their own`, async () => {
      const tenant = await createTenant();
      const user = tenant[role];
      const before = await liveSessions(user.id);
      const browser = new Browser();
      const res = await browser.signIn(user.email);
      expect(res.status).toBe(403);
      expect(textOf(await res.text())).toContain("The dashboard is for institution administrators");
      expect(browser.session).toBeUndefined();
      expect(await liveSessions(user.id)).toEqual(before);

      // Their API session put into the cookie by hand: still no page, and no form does anything.
      browser.cookies.set("__Host-lingua_session", user.token);
      for (const path of PAGES) {
        const page = await browser.get(path);
        expect([path, page.status]).toEqual([path, 403]);
        expect(await page.text()).not.toContain('name="_csrf"');
      }
      const tokensBefore = await callJson("/api/integrations/tokens?kind=api", { token: user.token });
      const post = await browser.post(TOKENS, {
        _csrf: "anything",
        name: "x",
        abilities: "*",
        expiry: "never",
      });
      expect(post.status).toBe(403);
      const tokensAfter = await callJson("/api/integrations/tokens?kind=api", { token: user.token });
      expect(tokensAfter.body.meta.total).toBe(tokensBefore.body.meta.total);
    });
  }

  it("lets platform staff choose an institution; an admin has no such page", async () => {
    const staff = await createPlatformAdmin();
    const tenant = await createTenant();
    const browser = new Browser();
    expect((await browser.signIn(staff.email)).status).toBe(303);
    const overview = await browser.get("/dashboard");
    expect(textOf(await overview.text())).toContain("Choose an institution");
    const picker = await browser.get(`/dashboard/institutions?q=${tenant.institution.slug}`);
    expect(picker.status).toBe(200);
    const html = await picker.text();
    expect(textOf(html)).toContain(tenant.institution.slug);
    const chosen = await browser.post("/dashboard/institutions/choose", {
      _csrf: csrfOf(html),
      institution_id: tenant.institution.id,
    });
    expect(chosen.status).toBe(303);
    const after = textOf(await (await browser.get("/dashboard")).text());
    expect(after).toContain(`Test institution ${tenant.institution.slug.slice(5)}`);
    expect(after).not.toContain("platform staff: choose");
    const unknown = await browser.post("/dashboard/institutions/choose", {
      _csrf: csrfOf(html),
      institution_id: "ins_nope",
    });
    expect(unknown.status).toBe(404);

    const { browser: admin } = await signedInAdmin(tenant);
    expect((await admin.get("/dashboard/institutions")).status).toBe(404);
  });
});

describe("dashboard: API tokens", () => {
  it("lists nothing yet with an empty state, creates a token that works against the API, and revokes it", async () => {
    const { tenant, browser } = await signedInAdmin();
    const empty = await browser.get(TOKENS);
    expect(empty.status).toBe(200);
    expect(textOf(await empty.text())).toContain("No API tokens yet");

    const form = await browser.get(`${TOKENS}/new`);
    const formHtml = await form.text();
    // The abilities offered are the admin's ceiling: no platform-only ability.
    expect(formHtml).toContain('value="webhooks:write"');
    expect(formHtml).not.toContain('value="institutions:write"');

    const { res, html, plain } = await createThroughPage(browser, {
      name: "HR sync",
      abilities: ["members:read", "tokens:read"],
      expiry: "30",
    });
    expect(res.status, html).toBe(201);
    expect(plain).toMatch(/^lng_[A-Za-z0-9_-]{43}$/);
    expect(html).toContain('data-copy="new-token"');

    const me = await callJson("/api/auth/me", { token: plain! });
    expect(me.res.status).toBe(200);
    expect(me.body.token).toMatchObject({ name: "HR sync", abilities: ["members:read", "tokens:read"] });
    const expires = Date.parse(me.body.token.expires_at);
    expect(Math.abs(expires - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000);
    expect((await call(`/api/institutions/${tenant.institution.id}/members`, { token: plain })).status).toBe(
      200,
    );
    expect((await call("/api/integrations/webhooks", { token: plain })).status).toBe(403);

    const list = await browser.get(TOKENS);
    const listHtml = await list.text();
    expect(textOf(listHtml)).toContain("HR sync");
    expect(listHtml).toContain(plain!.slice(0, 10));
    expect(listHtml).not.toContain(plain!);
    const id = me.body.token.id as string;
    const revoke = await browser.post(`${TOKENS}/${id}/revoke`, { _csrf: csrfOf(listHtml) });
    expect(revoke.status).toBe(303);
    expect(revoke.headers.get("Location")).toBe(`${TOKENS}?notice=revoked`);
    expect((await call("/api/auth/me", { token: plain })).status).toBe(401);
    expect(textOf(await (await browser.get(`${TOKENS}?notice=revoked`)).text())).toContain(
      "The token was revoked",
    );
  });

  it("takes a custom expiry date and no expiry, and refuses a past date, an empty name or no ability with the field named", async () => {
    const { tenant, browser } = await signedInAdmin();
    const custom = await createThroughPage(browser, {
      name: "Nightly",
      abilities: "*",
      expiry: "custom",
      expires_on: "2099-12-31",
    });
    expect(custom.res.status).toBe(201);
    const me = await callJson("/api/auth/me", { token: custom.plain! });
    expect(me.body.token.expires_at).toBe("2099-12-31T23:59:59Z");
    expect(me.body.token.abilities).toEqual(["*"]);
    const never = await createThroughPage(browser, {
      name: "Forever",
      abilities: "content:read",
      expiry: "never",
    });
    expect((await callJson("/api/auth/me", { token: never.plain! })).body.token.expires_at).toBeNull();

    const count = await apiTokenCount(tenant);
    for (const [fields, message] of [
      [
        { name: "Old", abilities: "*", expiry: "custom", expires_on: "2001-01-01" },
        "Expiry: must be in the future",
      ],
      [
        { name: "Bad", abilities: "*", expiry: "custom", expires_on: "2026-02-30" },
        "Expiry date: must be a calendar day",
      ],
      [{ name: "", abilities: "*", expiry: "never" }, "Name:"],
      [{ name: "None", expiry: "never" }, "Abilities:"],
    ] as const) {
      const refused = await createThroughPage(browser, fields);
      expect([fields, refused.res.status]).toEqual([fields, 422]);
      expect(textOf(refused.html)).toContain(message);
      expect(refused.plain).toBeUndefined();
    }
    expect(await apiTokenCount(tenant)).toBe(count);
  });

  it("refuses an ability beyond the role (a tampered form) with the API's reason, creating nothing", async () => {
    const { tenant, browser } = await signedInAdmin();
    const count = await apiTokenCount(tenant);
    const refused = await createThroughPage(browser, {
      name: "Too much",
      abilities: ["institutions:write"],
      expiry: "never",
    });
    expect(refused.res.status).toBe(403);
    expect(textOf(refused.html)).toContain("cannot hold `institutions:write`");
    expect(await apiTokenCount(tenant)).toBe(count);
  });

  it("refuses create and revoke without the session's CSRF token, or from another origin: nothing changes", async () => {
    const { tenant, browser } = await signedInAdmin();
    const { plain } = await createThroughPage(browser, { name: "Keep", abilities: "*", expiry: "never" });
    const id = (await callJson("/api/auth/me", { token: plain! })).body.token.id;
    const count = await apiTokenCount(tenant);
    const other = await signedInAdmin(tenant);
    const fields = { name: "Forged", abilities: "*", expiry: "never" };
    for (const res of [
      await browser.post(TOKENS, fields),
      await browser.post(TOKENS, { ...fields, _csrf: await other.browser.csrfFor() }),
      await browser.post(
        TOKENS,
        { ...fields, _csrf: await browser.csrfFor() },
        { Origin: "https://evil.example" },
      ),
      await browser.post(`${TOKENS}/${id}/revoke`, {}),
      await browser.post(
        `${TOKENS}/${id}/revoke`,
        { _csrf: await browser.csrfFor() },
        { "Sec-Fetch-Site": "cross-site", Origin: "" },
      ),
    ]) {
      expect(res.status).toBe(403);
      expect(textOf(await res.text())).toContain("Nothing was changed");
    }
    expect(await apiTokenCount(tenant)).toBe(count);
    expect((await call("/api/auth/me", { token: plain })).status).toBe(200);
  });

  it("answers another institution's token with 404 and leaves it working", async () => {
    const { browser } = await signedInAdmin();
    const other = await createTenant();
    const { body } = await callJson("/api/integrations/tokens", {
      token: other.admin.token,
      body: { name: "theirs", abilities: ["*"] },
    });
    const res = await browser.post(`${TOKENS}/${body.id}/revoke`, { _csrf: await browser.csrfFor() });
    expect(res.status).toBe(404);
    expect((await call("/api/auth/me", { token: body.token })).status).toBe(200);
  });

  it("paginates 25 to a page, newest first", async () => {
    const { tenant, browser } = await signedInAdmin();
    for (let i = 0; i < 26; i++) {
      await callJson("/api/integrations/tokens", {
        token: tenant.admin.token,
        body: { name: `bulk ${String(i).padStart(2, "0")}`, abilities: ["content:read"] },
      });
    }
    const first = await (await browser.get(TOKENS)).text();
    expect(textOf(first)).toContain("Page 1 of 2");
    expect(first).toContain(`href="${TOKENS}?page=2"`);
    const second = textOf(await (await browser.get(`${TOKENS}?page=2`)).text());
    expect(second).toContain("bulk 00");
    expect(second).not.toContain("bulk 25");
    const past = textOf(await (await browser.get(`${TOKENS}?page=9`)).text());
    expect(past).toContain("There is nothing on page 9");
  });
});

describe("dashboard: invitations", () => {
  it("points invitation URLs at the dashboard's page, where the person chooses a password", async () => {
    expect(INVITATION_PATH).toBe(ACCEPT_INVITATION_PATH);
    const tenant = await createTenant();
    const email = `new.admin.${Date.now()}@example.test`;
    const created = await callJson(`/api/institutions/${tenant.institution.id}/members`, {
      token: tenant.admin.token,
      body: { email, name: "New Admin", role: "institution_admin" },
    });
    expect(created.res.status).toBe(201);
    const url = new URL(created.body.invitation_url);
    expect(url.pathname).toBe("/dashboard/accept-invitation");

    const browser = new Browser();
    const page = await browser.get(url.pathname + url.search);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('autocomplete="new-password"');
    const token = url.searchParams.get("token")!;
    const mismatch = await browser.post(ACCEPT_INVITATION_PATH, {
      _csrf: csrfOf(html),
      token,
      password: "a long passphrase 2026",
      confirm: "another passphrase 2026",
    });
    expect(mismatch.status).toBe(422);
    const noCsrf = await browser.post(ACCEPT_INVITATION_PATH, {
      token,
      password: "a long passphrase 2026",
      confirm: "a long passphrase 2026",
    });
    expect(noCsrf.status).toBe(403);

    const accepted = await browser.post(ACCEPT_INVITATION_PATH, {
      _csrf: csrfOf(html),
      token,
      password: "a long passphrase 2026",
      confirm: "a long passphrase 2026",
    });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get("Location")).toBe("/dashboard");
    expect(browser.session).toBeDefined();
    expect((await browser.get("/dashboard")).status).toBe(200);
    const signIn = await callJson("/api/auth/sign-in", {
      body: { email, password: "a long passphrase 2026" },
      headers: { "CF-Connecting-IP": browser.ip },
    });
    expect(signIn.res.status).toBe(200);

    // Used once only.
    const again = await browser.post(ACCEPT_INVITATION_PATH, {
      _csrf: csrfOf(html),
      token,
      password: "a long passphrase 2026",
      confirm: "a long passphrase 2026",
    });
    expect(again.status).toBe(400);
    expect(textOf(await again.text())).toContain("already used or expired");
  });

  it("activates an invited learner without a dashboard session", async () => {
    const tenant = await createTenant();
    const created = await callJson(`/api/institutions/${tenant.institution.id}/members`, {
      token: tenant.admin.token,
      body: { email: `learner.${Date.now()}@example.test`, name: "L", role: "learner" },
    });
    const url = new URL(created.body.invitation_url);
    const browser = new Browser();
    const html = await (await browser.get(url.pathname + url.search)).text();
    const res = await browser.post(ACCEPT_INVITATION_PATH, {
      _csrf: csrfOf(html),
      token: url.searchParams.get("token")!,
      password: "a long passphrase 2026",
      confirm: "a long passphrase 2026",
    });
    expect(res.status).toBe(200);
    expect(textOf(await res.text())).toContain("Your password is set");
    expect(browser.session).toBeUndefined();
  });
});

describe("dashboard: pages and their headers", () => {
  it("sends a nonce CSP on every page, and no script runs without the nonce", async () => {
    const staff = await createPlatformAdmin();
    const { browser } = await signedInAdmin();
    const staffBrowser = new Browser();
    await staffBrowser.signIn(staff.email);
    const visits: [Browser, string][] = [
      [new Browser(), "/dashboard/sign-in"],
      [new Browser(), "/dashboard/accept-invitation?token=inv_x"],
      [new Browser(), "/dashboard/no-such-page"],
      ...[
        "/dashboard",
        TOKENS,
        `${TOKENS}/new`,
        WEBHOOKS,
        `${WEBHOOKS}/new`,
        EXPORTS,
        ANALYTICS,
        `${ANALYTICS}?view=print`,
        SETTINGS,
        `${SETTINGS}/sso`,
        ...SECTION_PAGES,
      ].map((p) => [browser, p] as [Browser, string]),
      [staffBrowser, "/dashboard/institutions"],
    ];
    for (const [who, path] of visits) {
      const res = await who.get(path);
      expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
      const csp = res.headers.get("Content-Security-Policy") ?? "";
      const nonce = /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
      expect([path, nonce]).toEqual([path, expect.stringMatching(/^[A-Za-z0-9_-]{24}$/)]);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("form-action 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      expect(res.headers.get("Cache-Control")).toBe("no-store");
      expect(res.headers.get("X-Frame-Options")).toBe("DENY");
      expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
      const html = await res.text();
      expect(html.startsWith("<!doctype html>")).toBe(true);
      const scripts = scriptTags(html);
      expect(scripts.length).toBeGreaterThan(0);
      for (const tag of scripts) {
        expect([path, tag]).toEqual([path, expect.stringContaining(`nonce="${nonce}"`)]);
        expect(tag).toMatch(/ src="\/dashboard\/assets\/dashboard-[0-9a-f]{8}\.js"/);
      }
      // No inline handlers or styles either.
      expect(html).not.toMatch(/\son[a-z]+=|\sstyle=/i);
    }
    // A fresh nonce per response.
    const a = (await browser.get(TOKENS)).headers.get("Content-Security-Policy");
    const b = (await browser.get(TOKENS)).headers.get("Content-Security-Policy");
    expect(a).not.toBe(b);
  });

  it("serves its stylesheet and script from the worker, cacheable for a year", async () => {
    const html = await (await new Browser().get("/dashboard/sign-in")).text();
    const css = /href="(\/dashboard\/assets\/[^"]+\.css)"/.exec(html)![1]!;
    const js = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    for (const [path, type] of [
      [css, "text/css"],
      [js, "text/javascript"],
    ]) {
      const res = await call(path!);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toContain(type!);
      expect(res.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    }
    expect((await call("/dashboard/assets/dashboard-00000000.js")).status).toBe(404);
  });

  it("keeps the dashboard out of the OpenAPI document", async () => {
    const { body } = await callJson("/api/openapi.json", { headers: { "CF-Connecting-IP": "192.0.2.77" } });
    expect(Object.keys(body.paths).filter((p) => p.startsWith("/dashboard"))).toEqual([]);
  });
});
