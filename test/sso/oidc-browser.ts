import { expect, inject } from "vitest";
import { call, callJson } from "../helpers/api";
import { freshIp } from "../helpers/tenants";
import { type SsoTenant, ssoTenant, stateCookieOf, uniqueName } from "./support";

/**
 * The browser's part of an OIDC sign-in against the real OpenID Provider on loopback (oidc-provider,
 * test/sso/openid-provider.ts): its client registered per institution, its accounts, and the whole
 * authorization code flow played as a browser (test/sso/oidc.test.ts, test/platform/multi-database-entry.test.ts).
 */

export const op = inject("openIdProviderUrl");

export type OidcTenant = SsoTenant & { clientId: string };

export async function registerClient(institutionId: string) {
  const res = await fetch(`${op}/reg`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [`https://api.lingua.test/api/auth/sso/oidc/${institutionId}/callback`],
      response_types: ["code"],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_basic",
    }),
  });
  const client = (await res.json()) as { client_id: string; client_secret: string };
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${JSON.stringify(client)}`);
  return { clientId: client.client_id, clientSecret: client.client_secret };
}

export function oidcTenant(options: Parameters<typeof ssoTenant>[0] = {}): Promise<OidcTenant> {
  return ssoTenant({ issuer: op, clientFor: registerClient, ...options });
}

export async function account(sub: string, claims: Record<string, unknown>) {
  await fetch(`${op}/control/accounts`, { method: "PUT", body: JSON.stringify({ sub, claims }) });
}

/** A person at the tenant's domain, known to the provider. */
export async function person(tenant: OidcTenant, claims: Record<string, unknown> = {}) {
  const sub = `sub-${uniqueName("a")}`;
  const email = `${uniqueName("p")}@${tenant.domain}`;
  await account(sub, { email, email_verified: true, name: "Ada Lovelace", ...claims });
  return { sub, email };
}

/** Cookies as a browser keeps them for the provider (the test ignores their paths). */
export class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of (res.headers as unknown as { getSetCookie(): string[] }).getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair?.indexOf("=") ?? -1;
      if (pair && at > 0) this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

export async function follow(url: string, jar: Jar): Promise<Response> {
  const res = await fetch(url, { redirect: "manual", headers: { Cookie: jar.header() } });
  jar.take(res);
  return res;
}

/**
 * Plays the browser: begins at `GET /api/auth/sso`, logs in at the provider as `sub`, and brings the
 * provider's redirect back to Lingua's callback with the state cookie. Returns the callback's answer.
 */
export async function signInThroughProvider(
  tenant: OidcTenant,
  who: { sub: string; email: string },
  options: {
    beforeCallback?: (callbackUrl: URL) => Promise<void> | void;
    cookie?: string | null;
    /** Bindings the callback runs with (e.g. a D1 that holds its write). */
    env?: Partial<Cloudflare.Env>;
  } = {},
) {
  const begin = await callJson(`/api/auth/sso?email=${encodeURIComponent(who.email)}`, {
    headers: { Accept: "application/json", "CF-Connecting-IP": freshIp() },
  });
  expect(begin.res.status, JSON.stringify(begin.body)).toBe(200);
  const stateCookie = stateCookieOf(begin.res);
  const jar = new Jar();
  const authorize = await follow(begin.body.redirect_url, jar);
  expect(authorize.status, await authorize.clone().text()).toBe(303);
  const interaction = new URL(authorize.headers.get("Location") ?? "", op);
  const login = await follow(
    `${interaction.href.replace(/\/$/, "")}/login?account=${encodeURIComponent(who.sub)}`,
    jar,
  );
  expect(login.status, await login.clone().text()).toBe(303);
  let next = new URL(login.headers.get("Location") ?? "", op);
  // Resume at the provider until it sends the browser to our redirect URI.
  for (let hops = 0; hops < 5 && next.origin === new URL(op).origin; hops++) {
    const resumed = await follow(next.href, jar);
    expect([302, 303], await resumed.clone().text()).toContain(resumed.status);
    next = new URL(resumed.headers.get("Location") ?? "", op);
  }
  expect(next.pathname).toBe(`/api/auth/sso/oidc/${tenant.institution.id}/callback`);
  await options.beforeCallback?.(next);
  const cookie = options.cookie === undefined ? stateCookie : options.cookie;
  const res = await call(`${next.pathname}${next.search}`, {
    headers: { "CF-Connecting-IP": freshIp(), ...(cookie ? { Cookie: cookie } : {}) },
    ...(options.env ? { env: options.env } : {}),
  });
  return { res, callbackUrl: next, stateCookie };
}

export function codeOf(res: Response): string {
  const location = res.headers.get("Location") ?? "";
  expect(location).toMatch(/^https:\/\/api\.lingua\.test\/dashboard\/sso#code=/);
  return decodeURIComponent(location.split("#code=")[1] ?? "");
}

export async function exchange(code: string) {
  return callJson("/api/auth/sso/session", { body: { code }, headers: { "CF-Connecting-IP": freshIp() } });
}
