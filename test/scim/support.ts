import { env } from "cloudflare:test";
import { and, asc, eq } from "drizzle-orm";
import { outboxEvents } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { createTenant, type Tenant } from "../helpers/tenants";

export const db = () => database(env.DB);

export const scimTokensPath = (institutionId: string) => `/api/institutions/${institutionId}/scim-tokens`;

/** A SCIM token of the tenant's institution, issued over HTTP by its admin. */
export async function issueScimToken(tenant: Tenant, name = "Okta"): Promise<{ token: string; id: string }> {
  const { res, body } = await callJson(scimTokensPath(tenant.institution.id), {
    token: tenant.admin.token,
    body: { name },
  });
  if (res.status !== 201) throw new Error(`SCIM token: ${res.status} ${JSON.stringify(body)}`);
  return { token: body.token, id: body.id };
}

/** A fresh institution and a SCIM token for it. */
export async function scimTenant(options: Parameters<typeof createTenant>[0] = {}) {
  const tenant = await createTenant(options);
  const { token } = await issueScimToken(tenant);
  return { tenant, scimToken: token };
}

let ipSequence = 0;

/** One SCIM request as an identity provider makes it: `application/scim+json`, the SCIM token. */
export async function scim(
  path: string,
  options: {
    token: string;
    method?: string;
    body?: unknown;
    headers?: Record<string, string>;
    /** Bindings the request runs with (e.g. a D1 that holds its write). */
    env?: Partial<Cloudflare.Env>;
  },
): Promise<{ res: Response; body: any }> {
  ipSequence += 1;
  const res = await call(`/scim/v2${path}`, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    token: options.token,
    ...(options.body !== undefined ? { rawBody: JSON.stringify(options.body) } : {}),
    headers: {
      ...(options.body !== undefined ? { "Content-Type": "application/scim+json; charset=utf-8" } : {}),
      "CF-Connecting-IP": `203.0.113.${(ipSequence % 250) + 1}`,
      ...options.headers,
    },
    ...(options.env ? { env: options.env } : {}),
  });
  const text = await res.text();
  return { res, body: text ? JSON.parse(text) : undefined };
}

export async function outboxOf(institutionId: string, type: string): Promise<any[]> {
  const rows = await db()
    .select({ payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(
      and(eq(outboxEvents.institutionId, institutionId), eq(outboxEvents.type, type as "member.created")),
    )
    .orderBy(asc(outboxEvents.id))
    .all();
  return rows.map((r) => (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload));
}

let emailSequence = 0;
export function uniqueEmail(tag = "scim"): string {
  emailSequence += 1;
  return `${tag}.${Date.now().toString(36)}${emailSequence}${Math.random().toString(36).slice(2, 6)}@acme.test`;
}

export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
