import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { institutions, memberGroups, outboxEvents, ssoRequests, users } from "../../src/db/schema";
import { completeSsoSignIn, mappedRole, underSignInLog } from "../../src/domains/sso/complete";
import { startRequest, takeRequest } from "../../src/domains/sso/pending";
import type { SsoRefusal } from "../../src/domains/sso/refusal";
import { database } from "../../src/platform/db";
import { Browser, csrfOf } from "../dashboard/support";
import { call, callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { freshIp, insertUser } from "../helpers/tenants";
import { putSso, type SsoTenant, ssoTenant, uniqueName } from "./support";

/**
 * The protocol-independent SSO sign-in: finding the institution (GET /api/auth/sso), the pending
 * request (single use, 10 minutes, bound to the browser), the member (found, provisioned, activated,
 * refused), the code exchange and the SSO log. The OIDC protocol itself: test/sso/oidc.test.ts.
 */

const db = () => database(env.DB);

function identity(tenant: SsoTenant, extra: Record<string, unknown> = {}) {
  const local = uniqueName("p");
  return { subject: `sub-${local}`, email: `${local}@${tenant.domain}`, name: `Person ${local}`, ...extra };
}

async function signInAs(tenant: SsoTenant, person: ReturnType<typeof identity> & Record<string, unknown>) {
  const ctx = testContext();
  return underSignInLog(ctx, { institutionId: tenant.institution.id, protocol: "oidc" }, () =>
    completeSsoSignIn(ctx, { institutionId: tenant.institution.id, protocol: "oidc", identity: person }),
  );
}

async function refusalOf(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; extensions?: Record<string, unknown>; message: string };
  }
  throw new Error("expected a refusal");
}

function log(tenant: SsoTenant, query = "") {
  return callJson(`/api/institutions/${tenant.institution.id}/sso/log${query}`, {
    token: tenant.admin.token,
  });
}

describe("GET /api/auth/sso", () => {
  it("sends a browser to the IdP (302) and a JSON client gets the URL, with a browser-binding cookie", async () => {
    const tenant = await ssoTenant();
    const email = `ada@${tenant.domain.toUpperCase()}`;
    const res = await call(`/api/auth/sso?email=${encodeURIComponent(email)}`, {
      headers: { "CF-Connecting-IP": freshIp() },
    });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("Location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(`${tenant.issuer}/authorize`);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: "code",
      response_mode: "query",
      client_id: "lingua",
      redirect_uri: `https://api.lingua.test/api/auth/sso/oidc/${tenant.institution.id}/callback`,
      scope: "openid email profile",
      code_challenge_method: "S256",
      login_hint: `ada@${tenant.domain}`,
    });
    expect(location.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const cookie = res.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(
      /^sso_state_[A-Za-z0-9_-]{43}=[A-Za-z0-9_-]{43}; Path=\/api\/auth\/sso; Max-Age=600; Secure; HttpOnly; SameSite=None$/,
    );

    const json = await callJson(`/api/auth/sso?institution=${tenant.institution.slug}`, {
      headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
    });
    expect(json.res.status).toBe(200);
    expect(new URL(json.body.redirect_url).pathname).toBe(new URL(`${tenant.issuer}/authorize`).pathname);
    expect(json.res.headers.get("Set-Cookie")).toMatch(/^sso_state_/);
  });

  it("answers the same 404 for an unknown domain, an unverified one, a draft and an inactive connection", async () => {
    const unverified = await ssoTenant({ verify: false });
    const draft = await ssoTenant({ state: "draft" });
    const inactive = await ssoTenant({ state: "inactive" });
    const answers = [];
    for (const query of [
      `email=someone@${uniqueName("nobody")}.test`,
      `email=someone@${unverified.domain}`,
      `email=someone@${draft.domain}`,
      `email=someone@${inactive.domain}`,
      `institution=${inactive.institution.slug}`,
      `institution=${uniqueName("nobody")}`,
    ]) {
      const { res, body } = await callJson(`/api/auth/sso?${query}`, {
        headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
      });
      answers.push({ status: res.status, code: body.code, detail: body.detail });
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toMatchObject({ status: 404, code: "sso_not_configured" });
  });

  it("wants exactly one of email and institution", async () => {
    for (const query of ["", "?email=a@b.test&institution=x"]) {
      const { res, body } = await callJson(`/api/auth/sso${query}`, {
        headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
      });
      expect(res.status).toBe(422);
      expect(body.code).toBe("validation_failed");
    }
  });
});

describe("pending requests", () => {
  it("are single use, bound to the browser's cookie, to the institution, and live ten minutes", async () => {
    const tenant = await ssoTenant();
    const other = await ssoTenant();
    const institutionId = tenant.institution.id;
    const ctx = testContext();
    const started = await startRequest(ctx, { institutionId, protocol: "oidc", pkce: true });
    const binding = started.cookie.split(";")[0]?.split("=")[1];
    const cookie = (value?: string) => () => value;
    const reason = async (input: Partial<Parameters<typeof takeRequest>[1]>, now?: () => number) =>
      takeRequest(testContext(now ? { now } : {}), {
        state: started.state,
        institutionId,
        protocol: "oidc",
        cookie: cookie(binding),
        ...input,
      }).then(
        () => "taken",
        (error: SsoRefusal) => error.reason,
      );
    expect(await reason({ state: undefined })).toBe("state_missing");
    expect(await reason({ state: "forged" })).toBe("state_unknown");
    // Another institution's callback neither takes it nor spends it; nor does the other protocol.
    expect(await reason({ institutionId: other.institution.id })).toBe("state_unknown");
    expect(await reason({ protocol: "saml" })).toBe("state_unknown");
    expect(await reason({ cookie: cookie(undefined) })).toBe("browser_binding_missing");
    // Spent by the attempt without the cookie: nobody can finish it any more.
    expect(await reason({})).toBe("state_used");

    const second = await startRequest(ctx, { institutionId, protocol: "oidc", pkce: true });
    const secondBinding = second.cookie.split(";")[0]?.split("=")[1];
    expect(
      await takeRequest(ctx, {
        state: second.state,
        institutionId,
        protocol: "oidc",
        cookie: () => binding,
      }).catch((e: SsoRefusal) => e.reason),
    ).toBe("browser_binding_mismatch");

    const late = await startRequest(ctx, { institutionId, protocol: "oidc", pkce: true });
    const lateBinding = late.cookie.split(";")[0]?.split("=")[1];
    const afterTenMinutes = () => Date.now() + 10 * 60_000 + 1;
    expect(
      await takeRequest(testContext({ now: afterTenMinutes }), {
        state: late.state,
        institutionId,
        protocol: "oidc",
        cookie: () => lateBinding,
      }).catch((e: SsoRefusal) => e.reason),
    ).toBe("state_expired");

    // Two callbacks at once with the same state: exactly one takes it.
    const raced = await startRequest(ctx, { institutionId, protocol: "oidc", pkce: true });
    const racedBinding = raced.cookie.split(";")[0]?.split("=")[1];
    const outcomes = await Promise.all(
      [1, 2].map(() =>
        takeRequest(testContext(), {
          state: raced.state,
          institutionId,
          protocol: "oidc",
          cookie: () => racedBinding,
        }).then(
          (row) => row.codeVerifier,
          (e: SsoRefusal) => e.reason,
        ),
      ),
    );
    expect(outcomes.filter((o) => o === raced.codeVerifier)).toHaveLength(1);
    expect(outcomes).toContain("state_used");
    expect(secondBinding).toBeTruthy();
    const stored = await db().select().from(ssoRequests).where(eq(ssoRequests.state, raced.state)).get();
    expect(stored?.browserBindingHash).not.toBe(racedBinding);
  });
});

describe("the SSO sweep", () => {
  it("deletes pending requests an hour after they expired, and keeps live ones", async () => {
    const tenant = await ssoTenant();
    const ctx = testContext();
    const old = await startRequest(ctx, {
      institutionId: tenant.institution.id,
      protocol: "oidc",
      pkce: true,
    });
    const { sweepSso } = await import("../../src/domains/sso/sweep");
    await sweepSso(testContext({ now: () => Date.now() + 30 * 60_000 }));
    expect(await db().select().from(ssoRequests).where(eq(ssoRequests.state, old.state)).get()).toBeDefined();
    await sweepSso(testContext({ now: () => Date.now() + 71 * 60_000 }));
    expect(
      await db().select().from(ssoRequests).where(eq(ssoRequests.state, old.state)).get(),
    ).toBeUndefined();
  });
});

describe("completeSsoSignIn", () => {
  it("provisions an unknown person just in time, links the subject, and exchanges the code once for a session", async () => {
    const tenant = await ssoTenant();
    const person = identity(tenant, { groups: ["Class 7b", " Class 7b ", "Staff"] });
    const signedIn = await signInAs(tenant, person);
    expect(signedIn.user).toMatchObject({
      email: person.email,
      name: person.name,
      role: "learner",
      status: "active",
      institutionId: tenant.institution.id,
    });
    const groups = await db().select().from(memberGroups).where(eq(memberGroups.userId, signedIn.user.id));
    expect(groups.map((g) => g.groupName).sort()).toEqual(["Class 7b", "Staff"]);
    const events = await db()
      .select()
      .from(outboxEvents)
      .where(and(eq(outboxEvents.userId, signedIn.user.id), eq(outboxEvents.type, "member.created")));
    expect(events).toHaveLength(1);

    const exchange = () =>
      callJson("/api/auth/sso/session", {
        body: { code: signedIn.code },
        headers: { "CF-Connecting-IP": freshIp() },
      });
    const first = await exchange();
    expect(first.res.status).toBe(200);
    expect(first.body).toMatchObject({
      token_type: "Bearer",
      user: {
        id: signedIn.user.id,
        email: person.email,
        role: "learner",
        institution_id: tenant.institution.id,
      },
    });
    expect(first.body.token).toMatch(/^lng_/);
    const me = await callJson("/api/auth/me", { token: first.body.token });
    expect(me.body.user.id).toBe(signedIn.user.id);
    const again = await exchange();
    expect(again.res.status).toBe(401);
    expect(again.body.code).toBe("invalid_credentials");

    // The same subject later, with another e-mail address, is the same member.
    const later = await signInAs(tenant, { ...person, email: `renamed-${person.email}` });
    expect(later.user.id).toBe(signedIn.user.id);
    const { body } = await log(tenant);
    expect(body.data.map((e: any) => [e.status, e.provisioned, e.user_id])).toEqual([
      ["succeeded", false, signedIn.user.id],
      ["succeeded", true, signedIn.user.id],
    ]);
  });

  it("a code is good for 60 seconds", async () => {
    const tenant = await ssoTenant();
    const signedIn = await signInAs(tenant, identity(tenant));
    const { exchangeSsoCode } = await import("../../src/domains/sso/session");
    const late = testContext({ now: () => Date.now() + 61_000 });
    await expect(exchangeSsoCode(late, signedIn.code)).rejects.toMatchObject({ code: "invalid_credentials" });
  });

  it("an invited member becomes active; a suspended one is refused and logged", async () => {
    const tenant = await ssoTenant();
    const invitedEmail = `${uniqueName("inv")}@${tenant.domain}`;
    const created = await callJson(`/api/institutions/${tenant.institution.id}/members`, {
      token: tenant.admin.token,
      body: { email: invitedEmail, name: "Invited Person", role: "instructor" },
    });
    expect(created.res.status).toBe(201);
    const signedIn = await signInAs(tenant, {
      ...identity(tenant),
      email: invitedEmail,
      name: null,
    } as never);
    expect(signedIn.user).toMatchObject({
      id: created.body.id,
      status: "active",
      role: "instructor",
      name: "Invited Person",
    });
    const updated = await db()
      .select()
      .from(outboxEvents)
      .where(and(eq(outboxEvents.userId, created.body.id), eq(outboxEvents.type, "member.updated")));
    expect(updated.map((e) => (e.payload as any).changes)).toEqual([
      { status: { from: "invited", to: "active" } },
    ]);

    await db().update(users).set({ status: "suspended" }).where(eq(users.id, created.body.id));
    const refused = await refusalOf(signInAs(tenant, { ...identity(tenant), email: invitedEmail }));
    expect(refused).toMatchObject({
      code: "sso_sign_in_refused",
      extensions: { reason: "member_suspended" },
    });
    const { body } = await log(tenant, "?status=refused");
    expect(body.data[0]).toMatchObject({
      id: refused.extensions?.sign_in_id,
      status: "refused",
      reason: "member_suspended",
      email: invitedEmail,
    });
  });

  it("caps the mapped role at instructor unless the settings let the mapping grant institution_admin", async () => {
    expect(mappedRole("institution_admin", false)).toBe("instructor");
    expect(mappedRole(["learner", "institution_admin"], true)).toBe("institution_admin");
    expect(mappedRole(["Instructor"], false)).toBe("instructor");
    expect(mappedRole("teacher", true)).toBeNull();
    expect(mappedRole(null, true)).toBeNull();

    const tenant = await ssoTenant();
    const capped = await signInAs(tenant, identity(tenant, { role: "institution_admin" }));
    expect(capped.user.role).toBe("instructor");

    const allowing = await ssoTenant({ extra: { idp_may_grant_admin: true } });
    const admin = await signInAs(allowing, identity(allowing, { role: ["institution_admin"] }));
    expect(admin.user.role).toBe("institution_admin");
  });

  it("refuses an unverified e-mail, an address outside the verified domains, another institution's account, and a full institution", async () => {
    const tenant = await ssoTenant();
    const reasonOf = async (person: Record<string, unknown>) =>
      (await refusalOf(signInAs(tenant, { ...identity(tenant), ...person } as never))).extensions?.reason;
    expect(await reasonOf({ emailVerified: false })).toBe("email_unverified");
    expect(await reasonOf({ email: `x@${uniqueName("elsewhere")}.test` })).toBe("email_domain_not_verified");

    const other = await ssoTenant();
    const outsider = await insertUser("learner", other.institution.id);
    // An address at our verified domain held by another institution's account.
    const address = `${uniqueName("taken")}@${tenant.domain}`;
    await db().update(users).set({ email: address }).where(eq(users.id, outsider.id));
    expect(await reasonOf({ email: address })).toBe("member_of_other_institution");

    await db().update(institutions).set({ seats: 1 }).where(eq(institutions.id, tenant.institution.id));
    expect(await reasonOf({})).toBe("seats_exhausted");

    const { body } = await log(tenant, "?status=refused&per_page=10");
    expect(body.data.map((e: any) => e.reason)).toEqual([
      "seats_exhausted",
      "member_of_other_institution",
      "email_domain_not_verified",
      "email_unverified",
    ]);
    expect(body.meta.total).toBe(4);
  });

  it("a connection no longer active refuses the sign-in", async () => {
    const tenant = await ssoTenant();
    await putSso(tenant, {
      type: "oidc",
      state: "inactive",
      domains: [tenant.domain],
      oidc: { issuer: tenant.issuer, client_id: "lingua" },
    });
    expect((await refusalOf(signInAs(tenant, identity(tenant)))).extensions?.reason).toBe("sso_inactive");
  });
});

describe("GET /api/institutions/{id}/sso/log", () => {
  it("needs sso:read and is 404 for another institution", async () => {
    const tenant = await ssoTenant();
    const other = await ssoTenant();
    expect(
      (await callJson(`/api/institutions/${other.institution.id}/sso/log`, { token: tenant.admin.token })).res
        .status,
    ).toBe(404);
    expect(
      (await callJson(`/api/institutions/${tenant.institution.id}/sso/log`, { token: tenant.learner.token }))
        .res.status,
    ).toBe(403);
    const { res, body } = await log(tenant);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ data: [], meta: { total: 0, current_page: 1 } });
  });
});

describe("the dashboard's SSO pages", () => {
  it("the landing page posts the fragment's code to the same exchange, which sets the session cookie", async () => {
    const tenant = await ssoTenant({ extra: { idp_may_grant_admin: true } });
    const signedIn = await signInAs(tenant, identity(tenant, { role: "institution_admin" }));
    const browser = new Browser();
    const page = await browser.get("/dashboard/sso");
    expect(page.status).toBe(200);
    const text = await page.text();
    const nonce = /<script nonce="([^"]+)">/.exec(text)?.[1];
    expect(nonce).toBeTruthy();
    expect(page.headers.get("Content-Security-Policy")).toContain(`script-src 'nonce-${nonce}'`);
    expect(text).toContain('form id="sso-exchange" method="post" action="/dashboard/sso"');

    const res = await browser.post("/dashboard/sso", { _csrf: csrfOf(text), code: signedIn.code });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/dashboard");
    expect(browser.session).toMatch(/^lng_/);
    const me = await callJson("/api/auth/me", { token: browser.session });
    expect(me.body.user.id).toBe(signedIn.user.id);

    // Used once: the same code again is refused on the page.
    const second = new Browser();
    const secondPage = await second.get("/dashboard/sso");
    const replay = await second.post("/dashboard/sso", {
      _csrf: csrfOf(await secondPage.text()),
      code: signedIn.code,
    });
    expect(replay.status).toBe(401);
    expect(await replay.text()).toContain("unknown, used or expired");
    expect(second.session).toBeUndefined();
  });

  it("the sign-in page offers SSO, starts it, and points a refused password at it", async () => {
    const tenant = await ssoTenant({ enforced: true });
    const browser = new Browser();
    const page = await (await browser.get("/dashboard/sign-in")).text();
    expect(page).toContain('action="/dashboard/sso/start"');
    const start = await browser.get(
      `/dashboard/sso/start?email=${encodeURIComponent(`ada@${tenant.domain}`)}`,
    );
    expect(start.status).toBe(302);
    expect(start.headers.get("Location")).toContain(`${tenant.issuer}/authorize?`);
    expect(start.headers.get("Set-Cookie")).toMatch(/^sso_state_/);
    const none = await browser.get(`/dashboard/sso/start?email=ada@${uniqueName("none")}.test`);
    expect(none.status).toBe(404);
    expect(await none.text()).toContain("No single sign-on for this address");

    const learner = await insertUser("learner", tenant.institution.id);
    const email = `${uniqueName("pw")}@${tenant.domain}`;
    await db().update(users).set({ email }).where(eq(users.id, learner.id));
    const refused = await browser.signIn(email);
    expect(refused.status).toBe(403);
    const refusedPage = await refused.text();
    expect(refusedPage).toContain("Your institution uses single sign-on");
    expect(refusedPage).toContain(`/dashboard/sso/start?email=${encodeURIComponent(email)}`);
  });
});
