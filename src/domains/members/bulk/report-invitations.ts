import type { Env } from "../../../env";
import type { Principal } from "../../../platform/auth/principal";
import { config } from "../../../platform/config";
import { sha256Hex } from "../../../platform/crypto/encoding";
import { unseal } from "../../../platform/crypto/sealing";
import { database } from "../../../platform/db";
import { nowIso } from "../../../platform/ids";
import { MEMBER_ROLES, mayGrant } from "../../institutions/access";
import { invitationUrl, mintInvitation } from "../invitations";
import { type BulkJob, type BulkReportRow, forgetInvitations } from "./jobs";

/**
 * Mints the invitations of the page's due rows, in one batch: a row's invitation is inserted only
 * while the row is still due, its member still `invited` with a role the reader may grant, and
 * without an invitation (a re-invite in between wins); the same batch clears those rows' due flags.
 * Two readers of one page at once: the second batch finds nothing due, so every invitation is shown
 * once. RETURNING says which were inserted. A row whose member has a role above the reader's stays
 * due, for a reader who may issue it.
 */
const MINT_DUE = `INSERT INTO invitations (user_id, institution_id, token_hash, expires_at, accepted_at, created_at)
  SELECT value->>'user_id', ?2, value->>'hash', value->>'expires_at', NULL, ?3 FROM json_each(?1)
  WHERE EXISTS (SELECT 1 FROM bulk_job_rows r WHERE r.job_id = ?4 AND r.line = value->>'line' AND r.invitation_due)
    AND EXISTS (SELECT 1 FROM users u WHERE u.id = value->>'user_id' AND u.institution_id = ?2 AND u.status = 'invited'
      AND u.role IN (SELECT value FROM json_each(?5)))
    AND NOT EXISTS (SELECT 1 FROM invitations i WHERE i.user_id = value->>'user_id')
  RETURNING user_id`;
const CLEAR_DUE = `UPDATE bulk_job_rows SET invitation_due = false
  WHERE job_id = ?1 AND invitation_due AND line IN (SELECT value FROM json_each(?2))
    AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = bulk_job_rows.user_id AND u.status = 'invited'
      AND u.role NOT IN (SELECT value FROM json_each(?3)))`;

/** Who may see invitation URLs: a reader who could issue them (`members:write`, role ceiling). */
function grantableRoles(principal: Principal): string[] {
  if (!principal.token.abilities.includes("members:write")) return [];
  return MEMBER_ROLES.filter((role) => mayGrant(principal.user.role, role));
}

async function mintDue(env: Env, job: BulkJob, due: BulkReportRow[], roles: string[], origin: string) {
  const shown = new Map<number, string>();
  if (due.length === 0) return shown;
  const now = nowIso();
  const minted = await Promise.all(due.map(async (row) => ({ row, invitation: await mintInvitation() })));
  const rows = minted.map(({ row, invitation }) => ({
    line: row.line,
    user_id: row.userId,
    hash: invitation.tokenHash,
    expires_at: invitation.expiresAt,
  }));
  const d1 = env.DB;
  const allowed = JSON.stringify(roles);
  const [inserted] = await d1.batch<{ user_id: string }>([
    d1.prepare(MINT_DUE).bind(JSON.stringify(rows), job.institutionId, now, job.id, allowed),
    d1.prepare(CLEAR_DUE).bind(job.id, JSON.stringify(due.map((r) => r.line)), allowed),
  ]);
  const insertedUsers = new Set((inserted?.results ?? []).map((r) => r.user_id));
  for (const { row, invitation } of minted) {
    if (row.userId && insertedUsers.has(row.userId))
      shown.set(row.line, invitationUrl(origin, invitation.token));
  }
  return shown;
}

/**
 * Rows of uploads queued before invitations were minted on first read carry a sealed token. It is
 * opened before anything is written (a value that fails to open loses nothing) and shown only to a
 * reader who may grant the member's role, and only while it is still the member's open invitation
 * (not after a re-invite, an accept or a suspension). Shown or dead, it is erased; `settled` lists
 * those lines.
 */
async function openSealed(env: Env, job: BulkJob, sealed: BulkReportRow[], roles: string[], origin: string) {
  const shown = new Map<number, string>();
  const settled: number[] = [];
  if (sealed.length === 0) return { shown, settled };
  const { results } = await env.DB.prepare(
    `SELECT u.id, u.role, u.status = 'invited' AND i.accepted_at IS NULL AS open, i.token_hash
     FROM users u LEFT JOIN invitations i ON i.user_id = u.id WHERE u.id IN (SELECT value FROM json_each(?1))`,
  )
    .bind(JSON.stringify(sealed.map((r) => r.userId)))
    .all<{ id: string; role: string; open: number; token_hash: string | null }>();
  const members = new Map(results.map((m) => [m.id, m]));
  const secret = config(env).encryptionKey;
  for (const row of sealed) {
    const member = members.get(row.userId ?? "");
    if (member && !roles.includes(member.role)) continue;
    const binding = { purpose: "bulk-invitation", id: `${job.id}:${row.line}` };
    const token = await unseal(row.invitationSealed ?? "", secret, binding);
    if (member?.open && member.token_hash === (await sha256Hex(token)))
      shown.set(row.line, invitationUrl(origin, token));
    settled.push(row.line);
  }
  return { shown, settled };
}

/**
 * The invitation URLs a page of a queued upload's report shows, by line: each created member's
 * invitation is minted the first time its row is read by somebody who may issue it (valid 7 days
 * from then) and never shown again. Readers with `members:read` only see none and use none up.
 */
export async function invitationsOnFirstRead(
  env: Env,
  principal: Principal,
  job: BulkJob,
  rows: BulkReportRow[],
  origin: string,
): Promise<Map<number, string>> {
  const roles = grantableRoles(principal);
  if (roles.length === 0 || job.dryRun) return new Map();
  const sealed = await openSealed(
    env,
    job,
    rows.filter((r) => r.invitationSealed),
    roles,
    origin,
  );
  const shown = await mintDue(
    env,
    job,
    rows.filter((r) => r.invitationDue && r.userId),
    roles,
    origin,
  );
  await forgetInvitations(database(env.DB), job.id, sealed.settled);
  for (const [line, url] of sealed.shown) shown.set(line, url);
  return shown;
}
