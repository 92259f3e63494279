import type { Env } from "../../../env";
import { config } from "../../../platform/config";
import { unseal } from "../../../platform/crypto/sealing";
import { database } from "../../../platform/db";
import { nowIso } from "../../../platform/ids";
import { invitationUrl, mintInvitation } from "../invitations";
import { type BulkJob, type BulkReportRow, forgetInvitations } from "./jobs";

/**
 * Mints the invitations of the page's due rows, in one batch: a row's invitation is inserted only
 * while the row is still due, its member still `invited` and without an invitation (a re-invite in
 * between wins), and the rows stop being due in the same batch. Two readers of one page at once:
 * the second batch finds nothing due, so every invitation is shown once. RETURNING says which were
 * inserted.
 */
const MINT_DUE = `INSERT INTO invitations (user_id, institution_id, token_hash, expires_at, accepted_at, created_at)
  SELECT value->>'user_id', ?2, value->>'hash', value->>'expires_at', NULL, ?3 FROM json_each(?1)
  WHERE EXISTS (SELECT 1 FROM bulk_job_rows r WHERE r.job_id = ?4 AND r.line = value->>'line' AND r.invitation_due)
    AND EXISTS (SELECT 1 FROM users u WHERE u.id = value->>'user_id' AND u.institution_id = ?2 AND u.status = 'invited')
    AND NOT EXISTS (SELECT 1 FROM invitations i WHERE i.user_id = value->>'user_id')
  RETURNING user_id`;
const CLEAR_DUE = `UPDATE bulk_job_rows SET invitation_due = false
  WHERE job_id = ?1 AND invitation_due AND line IN (SELECT value FROM json_each(?2))`;

async function mintDue(env: Env, job: BulkJob, due: BulkReportRow[], origin: string) {
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
  const [inserted] = await d1.batch<{ user_id: string }>([
    d1.prepare(MINT_DUE).bind(JSON.stringify(rows), job.institutionId, now, job.id),
    d1.prepare(CLEAR_DUE).bind(job.id, JSON.stringify(due.map((r) => r.line))),
  ]);
  const insertedUsers = new Set((inserted?.results ?? []).map((r) => r.user_id));
  for (const { row, invitation } of minted) {
    if (row.userId && insertedUsers.has(row.userId))
      shown.set(row.line, invitationUrl(origin, invitation.token));
  }
  return shown;
}

/** Rows of uploads queued before invitations were minted on first read carry a sealed token. */
async function openSealed(env: Env, job: BulkJob, sealed: BulkReportRow[], origin: string) {
  const shown = new Map<number, string>();
  if (sealed.length === 0) return shown;
  const secret = config(env).encryptionKey;
  for (const row of sealed) {
    const binding = { purpose: "bulk-invitation", id: `${job.id}:${row.line}` };
    shown.set(row.line, invitationUrl(origin, await unseal(row.invitationSealed ?? "", secret, binding)));
  }
  await forgetInvitations(database(env.DB), job.id, [...shown.keys()]);
  return shown;
}

/**
 * The invitation URLs a page of a queued upload's report shows, by line: each created member's
 * invitation is minted the first time its row is read (valid 7 days from then) and never shown again.
 */
export async function invitationsOnFirstRead(
  env: Env,
  job: BulkJob,
  rows: BulkReportRow[],
  origin: string,
): Promise<Map<number, string>> {
  const due = rows.filter((r) => r.invitationDue && r.userId && !job.dryRun);
  const sealed = rows.filter((r) => r.invitationSealed);
  const minted = await mintDue(env, job, due, origin);
  for (const [line, url] of await openSealed(env, job, sealed, origin)) minted.set(line, url);
  return minted;
}
