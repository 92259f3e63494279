import { env } from "cloudflare:test";
import { and, asc, eq } from "drizzle-orm";
import { institutions, outboxEvents } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { freshIp, type Tenant } from "../helpers/tenants";

export const INSTITUTIONS = "/api/institutions";
export const membersPath = (institutionId: string) => `${INSTITUTIONS}/${institutionId}/members`;
export const bulkPath = (institutionId: string) => `${INSTITUTIONS}/${institutionId}/members/bulk`;

let sequence = 0;
export function uniqueEmail(tag = "m"): string {
  sequence += 1;
  return `${tag}.${Date.now().toString(36)}${sequence}${Math.random().toString(36).slice(2, 6)}@school.test`;
}

/** POST a member as `token`; returns the response and body. */
export function addMember(token: string, institutionId: string, body: Record<string, unknown>) {
  return callJson(membersPath(institutionId), { token, body });
}

/** Every member of the institution (all pages), by the API. */
export async function allMembers(token: string, institutionId: string, query = ""): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const { res, body } = await callJson(
      `${membersPath(institutionId)}?per_page=100&page=${page}${query ? `&${query}` : ""}`,
      { token },
    );
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
    out.push(...body.data);
    if (!body.links.next) return out;
  }
}

/** The `token` query parameter of an invitation URL. */
export function invitationToken(url: string): string {
  const token = new URL(url).searchParams.get("token");
  if (!token) throw new Error(`no token in ${url}`);
  return token;
}

export function acceptInvitation(token: string, password = "a long passphrase 2026") {
  return callJson("/api/auth/accept-invitation", {
    body: { token, password },
    headers: { "CF-Connecting-IP": freshIp() },
  });
}

/** Uploads CSV text (or bytes) as the body. */
export function uploadCsv(
  token: string,
  institutionId: string,
  csv: string | Uint8Array,
  query = "",
  bindings?: Partial<Cloudflare.Env>,
) {
  return callJson(`${bulkPath(institutionId)}${query ? `?${query}` : ""}`, {
    method: "POST",
    token,
    rawBody: csv,
    headers: { "Content-Type": "text/csv" },
    env: bindings,
  });
}

/** The payloads of the institution's outbox events of `type`, in id order. */
export async function outboxOf(institutionId: string, type: string): Promise<any[]> {
  const rows = await database(env.DB)
    .select({ payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(and(eq(outboxEvents.institutionId, institutionId), eq(outboxEvents.type, type)))
    .orderBy(asc(outboxEvents.id));
  return rows.map((r) => r.payload);
}

export async function setSeats(tenant: Tenant, seats: number | null): Promise<void> {
  await database(env.DB)
    .update(institutions)
    .set({ seats })
    .where(eq(institutions.id, tenant.institution.id));
}

export { call, callJson };
