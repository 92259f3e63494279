import { expect, inject } from "vitest";
import { callJson } from "../helpers/api";
import type { dohStub } from "../helpers/receiver-doh";
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

/**
 * Proves `domain` for the institution by DNS as its admin would: the TXT record its SSO settings ask
 * for (`sso`, else read again) served by the loopback resolver `doh`, then `POST …/verify` (200).
 */
export async function verifyDomainByDns(
  tenant: Tenant,
  domain: string,
  doh: ReturnType<typeof dohStub>,
  sso?: { domain_verifications: { domain: string; txt_name: string; txt_value: string }[] },
): Promise<void> {
  const settings =
    sso ??
    (await callJson(`/api/institutions/${tenant.institution.id}/sso`, { token: tenant.admin.token })).body;
  const wanted = settings.domain_verifications.find((v: { domain: string }) => v.domain === domain);
  expect(wanted, `no verification asked for ${domain}`).toBeDefined();
  await doh.script({ [wanted.txt_name]: { TXT: [wanted.txt_value] } });
  const verified = await callJson(`/api/institutions/${tenant.institution.id}/sso/domains/${domain}/verify`, {
    method: "POST",
    token: tenant.admin.token,
    body: { method: "dns" },
    env: { OUTBOUND_DOH_URL: doh.resolverUrl },
  });
  expect(verified.res.status, JSON.stringify(verified.body)).toBe(200);
}
