import { env } from "cloudflare:test";
import { and, asc, eq } from "drizzle-orm";
import {
  apiTokens,
  bulkJobRows,
  bulkJobs,
  institutions,
  invitations,
  memberGroups,
  outboxEvents,
  users,
} from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { freshIp, type Tenant } from "../helpers/tenants";

/** Fixtures and helpers of the members tests: through the API, or through drizzle (no raw SQL). */

export const INSTITUTIONS = "/api/institutions";
export const membersPath = (institutionId: string) => `${INSTITUTIONS}/${institutionId}/members`;
export const bulkPath = (institutionId: string) => `${INSTITUTIONS}/${institutionId}/members/bulk`;

export const db = () => database(env.DB);

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

/** The `changes` of a member's `member.updated` events, in order. */
export async function memberUpdates(institutionId: string, userId: string): Promise<unknown[]> {
  const events = await outboxOf(institutionId, "member.updated");
  return events.filter((e) => e.user_id === userId).map((e) => e.changes);
}

export async function setSeats(tenant: Tenant, seats: number | null): Promise<void> {
  await db().update(institutions).set({ seats }).where(eq(institutions.id, tenant.institution.id)).run();
}

/** How many users the institution has (any status). */
export async function userCount(institutionId: string): Promise<number> {
  return db().$count(users, eq(users.institutionId, institutionId));
}

/** How many group memberships the institution has. */
export async function groupCount(institutionId: string): Promise<number> {
  return db().$count(memberGroups, eq(memberGroups.institutionId, institutionId));
}

let fixture = 0;
function nextTag(): string {
  fixture += 1;
  return `${Date.now().toString(36)}${fixture}${Math.random().toString(36).slice(2, 6)}`;
}

/** A member row straight into D1 (for statements tested without the API). */
export async function insertMember(
  institutionId: string,
  fields: Partial<typeof users.$inferInsert> = {},
  groups: string[] = [],
) {
  const tag = nextTag();
  const row = {
    id: `usr_fx_${tag}`,
    email: `fx.${tag}@school.test`,
    name: `Member ${tag}`,
    role: "learner" as const,
    institutionId,
    passwordHash: "x",
    status: "active" as const,
    externalId: null,
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
    ...fields,
  };
  await db().insert(users).values(row).run();
  if (groups.length > 0)
    await db()
      .insert(memberGroups)
      .values(groups.map((groupName) => ({ institutionId, userId: row.id, groupName })))
      .run();
  return row;
}

/** A live API token of `userId`, straight into D1. */
export async function insertLiveToken(userId: string, institutionId: string) {
  const tag = nextTag();
  const row = {
    id: `tok_fx_${tag}`,
    userId,
    institutionId,
    kind: "api" as const,
    name: "fixture",
    tokenHash: `hash_fx_${tag}`,
    prefix: "lng_x",
    abilities: ["content:read"],
    createdAt: "2026-01-01T00:00:00Z",
  };
  await db().insert(apiTokens).values(row).run();
  return row;
}

/** An invitation row of member `userId`, straight into D1. */
export async function insertInvitation(
  userId: string,
  institutionId: string,
  fields: Partial<typeof invitations.$inferInsert> = {},
) {
  const row = {
    userId,
    institutionId,
    tokenHash: `inv_hash_${nextTag()}`,
    expiresAt: "2099-01-01T00:00:00Z",
    acceptedAt: null,
    createdAt: "2026-01-01T00:00:00Z",
    ...fields,
  };
  await db().insert(invitations).values(row).run();
  return row;
}

/** A bulk job of the institution, uploaded by `uploadedBy`, straight into D1 (processing unless told). */
export async function insertBulkJob(
  institutionId: string,
  uploadedBy: string,
  fields: Partial<typeof bulkJobs.$inferInsert> = {},
) {
  const row = {
    id: `blk_fx_${nextTag()}`,
    institutionId,
    uploadedBy,
    uploaderRole: "institution_admin",
    mode: "upsert" as const,
    dryRun: false,
    status: "processing" as const,
    header: ["email"],
    totalRows: 10,
    nextRow: 0,
    heartbeatAt: 1,
    createdAt: "2026-01-01T00:00:00Z",
    ...fields,
  };
  await db().insert(bulkJobs).values(row).run();
  return row;
}

export async function findBulkJob(jobId: string) {
  return db().select().from(bulkJobs).where(eq(bulkJobs.id, jobId)).get();
}

/** A report row of job `jobId`, straight into D1. */
export async function insertReportRow(jobId: string, fields: Partial<typeof bulkJobRows.$inferInsert>) {
  const row = { jobId, line: 2, outcome: "created" as const, errors: [], ...fields };
  await db().insert(bulkJobRows).values(row).run();
  return row;
}

export { call, callJson };

/** An institution without members, straight into D1 (for statements tested without the API). */
export async function insertInstitution(seats: number | null = null) {
  const tag = nextTag();
  const row = { id: `ins_fx_${tag}`, slug: `fx-${tag}`, name: `Fixture ${tag}`, plan: "pro" as const, seats };
  await db().insert(institutions).values(row).run();
  return row;
}
