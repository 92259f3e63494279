import { inject } from "vitest";
import { callJson } from "../helpers/api";
import { createPlatformAdmin, createTenant, type Tenant, type TestUser } from "../helpers/tenants";

let sequence = 0;
export function uniqueName(prefix = "s"): string {
  sequence += 1;
  return `${prefix}${Date.now().toString(36)}${sequence}${Math.random().toString(36).slice(2, 5)}`;
}

let staff: Promise<TestUser> | undefined;
export function platformStaff(): Promise<TestUser> {
  staff ??= createPlatformAdmin();
  return staff;
}

export interface SsoTenant extends Tenant {
  domain: string;
  issuer: string;
}

export function putSso(tenant: Tenant, body: unknown) {
  return callJson(`/api/institutions/${tenant.institution.id}/sso`, {
    method: "PUT",
    token: tenant.admin.token,
    body,
  });
}

/**
 * A tenant whose OIDC SSO is set up: `issuer` (default: the scripted loopback IdP of
 * test/helpers/idp-server.ts), a domain verified by platform staff, `state` active unless told.
 */
export async function ssoTenant(
  options: {
    issuer?: string;
    clientId?: string;
    clientSecret?: string;
    state?: "draft" | "active" | "inactive";
    enforced?: boolean;
    claimMapping?: Record<string, string | null>;
    extra?: Record<string, unknown>;
    verify?: boolean;
    /** Registers the OIDC client for the institution (its redirect URI) first. */
    clientFor?: (institutionId: string) => Promise<{ clientId: string; clientSecret: string }>;
  } = {},
): Promise<SsoTenant & { clientId: string }> {
  const tenant = await createTenant();
  const client = options.clientFor
    ? await options.clientFor(tenant.institution.id)
    : { clientId: options.clientId ?? "lingua", clientSecret: options.clientSecret ?? "lingua-secret" };
  const issuer = options.issuer ?? `${inject("idpUrl")}/idp/${uniqueName("i")}`;
  const domain = `${uniqueName("d")}.school.test`;
  const body = (state: string, enforced: boolean) => ({
    type: "oidc",
    state,
    enforced,
    domains: [domain],
    oidc: {
      issuer,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      ...(options.claimMapping ? { claim_mapping: options.claimMapping } : {}),
    },
    ...options.extra,
  });
  const put = await putSso(tenant, body(options.state ?? "active", options.enforced ?? false));
  if (put.res.status !== 200) throw new Error(`PUT sso: ${put.res.status} ${JSON.stringify(put.body)}`);
  if (options.verify !== false) {
    const verified = await callJson(
      `/api/institutions/${tenant.institution.id}/sso/domains/${domain}/verify`,
      { method: "POST", token: (await platformStaff()).token, body: { method: "manual" } },
    );
    if (verified.res.status !== 200)
      throw new Error(`verify: ${verified.res.status} ${JSON.stringify(verified.body)}`);
  }
  return { ...tenant, domain, issuer, clientId: client.clientId };
}

/** The `sso_state_<state>` cookie a begin answer set, as a `Cookie` header value. */
export function stateCookieOf(res: Response): string {
  const set = res.headers.get("Set-Cookie") ?? "";
  const pair = set.split(";")[0] ?? "";
  if (!pair.startsWith("sso_state_")) throw new Error(`no state cookie: ${set}`);
  return pair;
}
